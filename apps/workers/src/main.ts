import { loadWorkersConfig } from '@hogbase/config';
import { launchProbedService } from '@hogbase/service-runtime';
import { openWorkersEngines, startWorkersService } from '@hogbase/workers';

/** The workers alone (split mode): batch-export runs and backfills on pg-boss, reading ClickHouse. */
launchProbedService({
  app: 'workers',
  loadConfig: loadWorkersConfig,
  openEngines: openWorkersEngines,
  startService: startWorkersService,
  stopping: 'workers stopping: finishing the runs in progress',
});
