export { startWorkersService } from './workers.service';
export { createWorkersPool, openWorkersEngines } from './workers-engines.util';

// One run executed outside the service, for the export bench.
export { executeRun } from './run-executor.handler';
export { clickhouseTime } from './run-query.util';
export { RunStore } from './run.store';
