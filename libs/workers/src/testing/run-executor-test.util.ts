import type { Pool } from 'pg';
import pino from 'pino';
import type { TestClickHouse } from '@hogbase/clickhouse/testing';
import { DEFAULT_BATCH_EXPORT_QUERY_LIMITS } from '@hogbase/config';
import type { RunExecutorDeps } from '../run-executor';
import { RunStore } from '../run-store';

/**
 * The run executor's deps for a test: runs and persons in `pool`, events in `clickhouse`, no lag,
 * the default query limits, a silent logger; `deps` names the rest and overrides any of these.
 */
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
