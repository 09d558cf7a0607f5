import type { Pool } from 'pg';
import pino from 'pino';
import type { TestClickHouse } from '@hogbase/clickhouse/testing';
import { DEFAULT_BATCH_EXPORT_QUERY_LIMITS } from '@hogbase/config';
import type { RunExecutorDeps } from '../run-executor.handler';
import { RunStore } from '../run.store';

/** No lag, the default query limits, a silent logger; `deps` names the rest and overrides any. */
export function testRunExecutorDeps(
  pool: Pool,
  clickhouse: TestClickHouse,
  deps: Pick<RunExecutorDeps, 'secrets' | 'destinations'> & Partial<RunExecutorDeps>,
): RunExecutorDeps {
  return {
    store: new RunStore(pool),
    pool,
    clickhouse: clickhouse.client,
    database: clickhouse.database,
    logger: pino({ level: 'silent' }),
    lagSeconds: 0,
    queryLimits: DEFAULT_BATCH_EXPORT_QUERY_LIMITS,
    ...deps,
  };
}
