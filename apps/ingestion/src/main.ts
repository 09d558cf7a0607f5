import { loadIngestionConfig } from '@hogbase/config';
import { openIngestionEngines, startIngestionService } from '@hogbase/ingestion';
import { launchProbedService } from '@hogbase/service-runtime';

/** Ingestion alone (split mode): Kafka → Postgres persons → ClickHouse events; offsets commit after both. */
launchProbedService({
  app: 'ingestion',
  loadConfig: loadIngestionConfig,
  openEngines: openIngestionEngines,
  startService: startIngestionService,
  stopping: 'ingestion stopping: draining the batch in flight',
});
