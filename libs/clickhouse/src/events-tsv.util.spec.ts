import { EVENTS_TABLE_COLUMNS, type EventRow } from './event-row.types';
import { escapeTsvField, eventRowsAsTsv } from './events-tsv.util';

const row: EventRow = {
  uuid: '0190c3a4-1b2c-7d3e-8f40-123456789abc',
  event: '$pageview',
  properties: '{"$current_url":"https://example.com/"}',
  timestamp: '2024-03-01 10:00:00.000000',
  team_id: 1,
  distinct_id: 'user-1',
  created_at: '2024-03-01 10:00:01.000000',
  person_id: '0190c3a4-1b2c-7d3e-8f40-123456789abd',
};

/** The columns every row must carry: those of `row`, in table order. */
const REQUIRED = Object.keys(row);

describe('escapeTsvField', () => {
  it('writes a backslash, tab, newline and carriage return as escapes', () => {
    expect(escapeTsvField('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
    // \N is how TabSeparated spells NULL: as text it must keep its backslash escaped.
    expect(escapeTsvField('\\N')).toBe('\\\\N');
  });

  it('leaves everything else as is: quotes, JSON, non-ASCII', () => {
    const json = '{"quote":"it\'s \\"ok\\"","emoji":"🦔"}';
    expect(escapeTsvField('{"a":"b c"}')).toBe('{"a":"b c"}');
    expect(escapeTsvField('ключ 🦔 \'"')).toBe('ключ 🦔 \'"');
    expect(escapeTsvField(json)).toBe(json.replaceAll('\\', '\\\\'));
  });
});

describe('eventRowsAsTsv', () => {
  it('writes one line per row, its fields in table order', () => {
    const [tsv, ...others] = eventRowsAsTsv([row, { ...row, distinct_id: 'user\t2' }]);

    expect(others).toEqual([]);
    expect(tsv).toEqual({
      columns: REQUIRED,
      body:
        '0190c3a4-1b2c-7d3e-8f40-123456789abc\t$pageview\t{"$current_url":"https://example.com/"}\t' +
        '2024-03-01 10:00:00.000000\t1\tuser-1\t2024-03-01 10:00:01.000000\t0190c3a4-1b2c-7d3e-8f40-123456789abd\n' +
        '0190c3a4-1b2c-7d3e-8f40-123456789abc\t$pageview\t{"$current_url":"https://example.com/"}\t' +
        '2024-03-01 10:00:00.000000\t1\tuser\\t2\t2024-03-01 10:00:01.000000\t0190c3a4-1b2c-7d3e-8f40-123456789abd\n',
      rows: 2,
    });
  });

  it('gives each set of columns its own body, in the order first seen, so a left-out column keeps its default', () => {
    const full: EventRow = {
      ...row,
      elements_chain: '',
      person_properties: '{}',
      person_created_at: '2024-03-01 09:00:00.000',
      $group_0: '',
      $group_1: '',
      $group_2: '',
      $group_3: '',
      $group_4: '',
      _offset: 7,
    };
    const tsvs = eventRowsAsTsv([
      full,
      row,
      { ...full, _offset: 8 },
      { ...row, _timestamp: '2024-03-01 10:00:02' },
    ]);

    expect(tsvs.map(({ columns, rows }) => ({ columns, rows }))).toEqual([
      { columns: EVENTS_TABLE_COLUMNS.filter((column) => column !== '_timestamp'), rows: 2 },
      { columns: REQUIRED, rows: 1 },
      { columns: [...REQUIRED, '_timestamp'], rows: 1 },
    ]);
    expect(tsvs[0].body.split('\n').map((line) => line.split('\t').at(-1))).toEqual(['7', '8', '']);
  });

  it('refuses a field the table does not have instead of dropping it', () => {
    expect(() => eventRowsAsTsv([{ ...row, not_a_column: 'x' } as EventRow])).toThrow(/not_a_column/);
  });

  it('gives nothing to insert for no rows', () => {
    expect(eventRowsAsTsv([])).toEqual([]);
  });
});
