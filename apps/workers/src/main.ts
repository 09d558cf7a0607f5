import { loadWorkersConfig } from '@hogbase/config';
import { launchProbedService } from '@hogbase/service-runtime';
import { openWorkersEngines, startWorkersService } from '@hogbase/workers';

/**
 * The workers alone (split mode): batch-export runs and backfills on pg-boss over the Postgres of
 * DATABASE_URL, reading a ClickHouse server. Probes on WORKERS_PORT (default 8030). SIGTERM lets
 * the runs in progress finish (8 s), then hands them back to the job engine.
 */
launchProbedService({
  app: 'workers',
  loadConfig: loadWorkersConfig,
  openEngines: openWorkersEngines,
  startService: startWorkersService,
  stopping: 'workers stopping: finishing the runs in progress',
});
