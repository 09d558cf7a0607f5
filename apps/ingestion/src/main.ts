import { loadIngestionConfig } from '@hogbase/config';
import { openIngestionEngines, startIngestionService } from '@hogbase/ingestion';
import { launchProbedService } from '@hogbase/service-runtime';

/**
 * Ingestion alone (split mode): Kafka → persons and groups in Postgres → events in ClickHouse,
 * committing offsets only after both writes. Probes on INGESTION_PORT (default 8020). SIGTERM
 * stops intake, finishes the batch in flight, commits, then exits.
 */
launchProbedService({
  app: 'ingestion',
  loadConfig: loadIngestionConfig,
  openEngines: openIngestionEngines,
  startService: startIngestionService,
  stopping: 'ingestion stopping: draining the batch in flight',
});
