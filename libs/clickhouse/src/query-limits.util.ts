import type { ClickHouseSettings } from '@clickhouse/client';

/** Bounds on a query run on a user's behalf: it ends as an error the caller can explain. */
export interface QueryLimits {
  maxExecutionSeconds: number;
  /** Sorts and aggregations spill past half of it; on chDB the whole result counts against it too. */
  maxMemoryBytes: number;
  maxResultBytes: number;
  /** Rows a query may read from tables; unbounded when absent. */
  maxRowsToRead?: number;
}

/**
 * `throw` spelled out: `break`, which a server's profile may set, ends a query early without an error.
 * TRICKY: chDB applies these as session `SET`s that stay: give one client's queries the same limits.
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
    ...(limits.maxRowsToRead === undefined
      ? {}
      : { max_rows_to_read: String(limits.maxRowsToRead), read_overflow_mode: 'throw' as const }),
  };
}

export type ExceededQueryLimit = 'time' | 'memory' | 'result' | 'rows';

const LIMIT_ERRORS: ReadonlyMap<string, ExceededQueryLimit> = new Map([
  ['TIMEOUT_EXCEEDED', 'time'],
  ['159', 'time'],
  ['MEMORY_LIMIT_EXCEEDED', 'memory'],
  ['241', 'memory'],
  ['TOO_MANY_ROWS_OR_BYTES', 'result'],
  ['396', 'result'],
  ['TOO_MANY_ROWS', 'rows'],
  ['158', 'rows'],
]);

export function exceededQueryLimit(error: unknown): ExceededQueryLimit | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, code } = error as { type?: unknown; code?: unknown };
  if (typeof type === 'string' && LIMIT_ERRORS.has(type)) return LIMIT_ERRORS.get(type);
  return typeof code === 'string' ? LIMIT_ERRORS.get(code) : undefined;
}
