import { parseEventListRequest } from './event-list-request.util';
import { EventListQuery } from './event-list-query.util';
import { encodeEventCursor } from './event-cursor.util';

const NOW = new Date('2025-06-15T13:45:00Z');

function queryFor(params: Record<string, string>) {
  return new EventListQuery({
    table: 'hogbase.events',
    teamId: 7,
    request: parseEventListRequest(params, undefined, NOW),
    conditions: [],
    compiledParams: {},
  });
}

describe('EventListQuery', () => {
  it('binds the project and every request value as parameters, never in the SQL text', () => {
    const hostile = "x' OR 1=1 --";
    const { sql, params } = queryFor({ event: hostile, distinct_id: hostile, after: '2025-01-01' }).build();
    expect(sql).toContain('WHERE team_id = {team_id:Int64}');
    expect(sql).not.toContain(hostile);
    expect(params).toMatchObject({ team_id: 7, event: hostile, distinct_id: hostile, limit: 101, offset: 0 });
  });

  const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
  const text = (value: bigint | undefined) =>
    value === undefined ? undefined : new Date(Number(value / 1000n)).toISOString();

  it('reads the day of the upper bound first, then whole days sized by the density found so far', () => {
    const query = queryFor({});
    const first = query.firstWindow()!;
    expect(text(first.start)).toBe('2025-06-15T00:00:00.000Z');
    expect(first.end).toBeUndefined();
    // 10 of 101 events in the 13h45m05s scanned: 91 more need 9.1 × 1.25 times as long, 6.52 days.
    const second = query.nextWindow(first, 10, 91, 1);
    expect(second.end).toBe(first.start);
    expect(text(second.start)).toBe('2025-06-08T00:00:00.000Z');
    // 90 of 101 in 7 days and 13h45m05s: 11 more need 1.16 days.
    expect(text(query.nextWindow(second, 90, 11, 2).start)).toBe('2025-06-07T00:00:00.000Z');
    // Nothing found: six times what was scanned (13h45m05s, then 7 days), whole days.
    expect(text(query.nextWindow(first, 0, 101, 1).start)).toBe('2025-06-12T00:00:00.000Z');
    const week = { start: micros('2025-06-08T00:00:00Z'), end: first.start };
    expect(text(query.nextWindow(week, 0, 101, 2).start)).toBe('2025-04-24T00:00:00.000Z');
    const justAfterMidnight = queryFor({ before: '2025-06-15T00:10:00Z' });
    const short = justAfterMidnight.firstWindow()!;
    expect(text(justAfterMidnight.nextWindow(short, 0, 101, 1).start)).toBe('2025-06-14T00:00:00.000Z');
  });

  it('reads everything older in one query after five windows or below `after`', () => {
    const query = queryFor({ after: '2025-06-01' });
    const first = query.firstWindow()!;
    expect(query.nextWindow(first, 0, 101, 5)).toEqual({ start: undefined, end: first.start });
    const week = { start: micros('2025-06-08T13:45:05Z'), end: first.start };
    expect(query.nextWindow(week, 0, 101, 2)).toEqual({ start: undefined, end: week.start });
  });

  it("reads everything older in one query rather than start a window before DateTime64's range", () => {
    const query = queryFor({});
    // One match in the day, 100 more wanted: 125 days; one in those, 100 more: ~43 years, then 5,000.
    let window = query.firstWindow()!;
    for (let scanned = 1; window.start !== undefined; scanned += 1) {
      expect(window.start).toBeGreaterThanOrEqual(micros('1900-01-01T00:00:00Z'));
      window = query.nextWindow(window, 1, 100, scanned);
    }
    expect(window.end).toBeGreaterThanOrEqual(micros('1900-01-01T00:00:00Z'));
    const { sql, params } = query.build(window, 101);
    expect(sql).not.toContain('window_start');
    expect(String(params.window_end)).toMatch(/^\d{4}-\d{2}-\d{2} /);
  });

  it('has no window when the day starts before `after`, nor for oldest-first pages', () => {
    expect(queryFor({ after: '2025-06-15T01:00:00Z' }).firstWindow()).toBeUndefined();
    expect(queryFor({ orderBy: '["timestamp"]' }).firstWindow()).toBeUndefined();
  });

  it('bounds a window on both sides and reads it from its first row', () => {
    const { sql, params } = queryFor({ offset: '5' }).build(
      { start: micros('2025-06-01T00:00:00Z'), end: micros('2025-06-10T00:00:00Z') },
      42,
    );
    expect(sql).toContain("timestamp >= toDateTime64({window_start:String}, 6, 'UTC')");
    expect(sql).toContain("timestamp < toDateTime64({window_end:String}, 6, 'UTC')");
    expect(params).toMatchObject({
      window_start: '2025-06-01 00:00:00.000000',
      window_end: '2025-06-10 00:00:00.000000',
      limit: 42,
      offset: 0,
    });
  });

  it('starts the windows at the cursor when it is older than `before`', () => {
    const cursor = encodeEventCursor({
      timestamp: '2025-03-02 10:00:00.000000',
      uuid: '0195566e-9c00-7000-8000-000000000000',
    });
    const query = queryFor({ cursor });
    expect(text(query.firstWindow()!.start)).toBe('2025-03-02T00:00:00.000Z');
    const { sql, params } = query.build();
    expect(sql).toContain('uuid < toUUID({cursor_uuid:String})');
    expect(params).toMatchObject({ cursor_timestamp: '2025-03-02 10:00:00.000000' });
  });
});
