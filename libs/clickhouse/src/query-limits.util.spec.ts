import { ClickHouseError } from '@clickhouse/client';
import { exceededQueryLimit, queryLimitSettings } from './query-limits.util';

describe("the limits of a query on a user's behalf", () => {
  it('bounds time, memory and result, spills sorts past half the memory, and throws on every overflow', () => {
    expect(
      queryLimitSettings({ maxExecutionSeconds: 30, maxMemoryBytes: 2_000_000_000, maxResultBytes: 1_000 }),
    ).toEqual({
      max_execution_time: 30,
      timeout_overflow_mode: 'throw',
      max_memory_usage: '2000000000',
      max_bytes_before_external_sort: '1000000000',
      max_bytes_before_external_group_by: '1000000000',
      max_result_bytes: '1000',
      result_overflow_mode: 'throw',
    });
  });

  it('bounds the rows read when asked to, and throws past them', () => {
    expect(
      queryLimitSettings({ maxExecutionSeconds: 1, maxMemoryBytes: 2, maxResultBytes: 3, maxRowsToRead: 4 }),
    ).toMatchObject({ max_rows_to_read: '4', read_overflow_mode: 'throw' });
  });

  it.each([
    ['TIMEOUT_EXCEEDED', '159', 'time'],
    ['MEMORY_LIMIT_EXCEEDED', '241', 'memory'],
    ['TOO_MANY_ROWS_OR_BYTES', '396', 'result'],
    ['TOO_MANY_ROWS', '158', 'rows'],
  ] as const)('names the limit of a %s error, by its name or its code', (type, code, limit) => {
    expect(exceededQueryLimit(new ClickHouseError({ message: 'over', code, type }))).toBe(limit);
    expect(exceededQueryLimit(new ClickHouseError({ message: 'over', code, type: '' }))).toBe(limit);
  });

  it('names no limit for any other error', () => {
    expect(exceededQueryLimit(new ClickHouseError({ message: 'x', code: '60', type: 'UNKNOWN_TABLE' }))).toBe(
      undefined,
    );
    expect(exceededQueryLimit(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(undefined);
    expect(exceededQueryLimit('TIMEOUT_EXCEEDED')).toBe(undefined);
    expect(exceededQueryLimit(null)).toBe(undefined);
  });
});
