import { parseEventListRequest } from './event-list.request';
import { EventListQuery } from './event-list.query';
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

  it('tries the day of the upper bound, then 7 and 30 days, newest first', () => {
    expect(queryFor({}).windowStarts()).toEqual([
      '2025-06-15 00:00:00.000000',
      '2025-06-08 13:45:05.000000',
      '2025-05-16 13:45:05.000000',
    ]);
  });

  it('skips windows that would start before `after`, and never windows oldest-first pages', () => {
    expect(queryFor({ after: '2025-06-01' }).windowStarts()).toEqual([
      '2025-06-15 00:00:00.000000',
      '2025-06-08 13:45:05.000000',
    ]);
    expect(queryFor({ after: '2025-06-15T01:00:00Z' }).windowStarts()).toEqual([]);
    expect(queryFor({ orderBy: '["timestamp"]' }).windowStarts()).toEqual([]);
  });

  it('starts the windows at the cursor when it is older than `before`', () => {
    const cursor = encodeEventCursor({
      timestamp: '2025-03-02 10:00:00.000000',
      uuid: '0195566e-9c00-7000-8000-000000000000',
    });
    const query = queryFor({ cursor });
    expect(query.windowStarts()[0]).toBe('2025-03-02 00:00:00.000000');
    const { sql, params } = query.build();
    expect(sql).toContain('uuid < toUUID({cursor_uuid:String})');
    expect(params).toMatchObject({ cursor_timestamp: '2025-03-02 10:00:00.000000' });
  });
});
