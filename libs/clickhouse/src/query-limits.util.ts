import type { ClickHouseSettings } from '@clickhouse/client';

/**
 * Bounds on one query the product runs on a user's behalf (an events listing, a batch-export run
 * with the member's `hogql_query`): whatever the user wrote, it ends as an error the caller can
 * explain, not as a server that ran out of memory or a query that never ends.
 */
export interface QueryLimits {
  /** Seconds the query may run (`max_execution_time`). */
  maxExecutionSeconds: number;
  /**
   * Bytes of memory it may use (`max_memory_usage`). Sorts and aggregations spill to disk past
   * half of it instead of failing. NOTE: on chDB the whole result is built in memory before the
   * client reads it, so it counts against this too.
   */
  maxMemoryBytes: number;
  /** Uncompressed bytes of its result (`max_result_bytes`); ClickHouse stops at the block past it. */
  maxResultBytes: number;
}

/**
 * The ClickHouse settings of `limits`, for `clickhouse_settings`.
 *
 * The overflow modes are spelled out: with `break`, which a server's profile may set, ClickHouse
 * would end a query over its bound early *without an error*, and an export would silently miss
 * rows. `throw` makes every overflow an error.
 *
 * TRICKY: chDB applies `clickhouse_settings` as `SET` statements of the client's session, so they
 * stay for the client's next queries. Give one client's user queries the same limits each time
 * (or a client of their own).
 */
export function queryLimitSettings(limits: QueryLimits): ClickHouseSettings {
  const spillBytes = String(Math.floor(limits.maxMemoryBytes / 2));
  return {
    max_execution_time: limits.maxExecutionSeconds,
    timeout_overflow_mode: 'throw',
    max_memory_usage: String(limits.maxMemoryBytes),
    max_bytes_before_external_sort: spillBytes,
    max_bytes_before_external_group_by: spillBytes,
    max_result_bytes: String(limits.maxResultBytes),
    result_overflow_mode: 'throw',
  };
}

export type ExceededQueryLimit = 'time' | 'memory' | 'result';

/** ClickHouse's exception names (and codes, as a fallback) for each limit. */
const LIMIT_ERRORS: ReadonlyMap<string, ExceededQueryLimit> = new Map([
  ['TIMEOUT_EXCEEDED', 'time'],
  ['159', 'time'],
  ['MEMORY_LIMIT_EXCEEDED', 'memory'],
  ['241', 'memory'],
  ['TOO_MANY_ROWS_OR_BYTES', 'result'],
  ['396', 'result'],
]);

/**
 * Which limit a ClickHouse error (of `@clickhouse/client`, on a server or chDB) says the query
 * went past, or undefined for any other error.
 */
export function exceededQueryLimit(error: unknown): ExceededQueryLimit | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, code } = error as { type?: unknown; code?: unknown };
  if (typeof type === 'string' && LIMIT_ERRORS.has(type)) return LIMIT_ERRORS.get(type);
  return typeof code === 'string' ? LIMIT_ERRORS.get(code) : undefined;
}
