import { EVENTS_TABLE_COLUMNS, type EventRow } from './event-row.types';

export type EventColumn = (typeof EVENTS_TABLE_COLUMNS)[number];

/** Each of the others a row may leave out, for its default. */
const REQUIRED_COLUMNS: ReadonlySet<string> = new Set([
  'uuid',
  'event',
  'properties',
  'timestamp',
  'team_id',
  'distinct_id',
  'created_at',
  'person_id',
] satisfies (keyof EventRow & EventColumn)[]);

const OPTIONAL_COLUMNS = EVENTS_TABLE_COLUMNS.filter((column) => !REQUIRED_COLUMNS.has(column));

const OPTIONAL_BIT = new Map<string, number>(OPTIONAL_COLUMNS.map((column, index) => [column, 1 << index]));

export interface EventsTsv {
  columns: EventColumn[];
  body: string;
  rows: number;
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPED: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Written raw, a backslash would start an escape, a tab or newline end the field. */
export function escapeTsvField(value: string): string {
  return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (char) => ESCAPED[char]) : value;
}

/** One bit per optional column. A misspelt column is an error, never dropped silently. */
function shapeOf(row: EventRow): number {
  let shape = 0;
  for (const key in row) {
    const bit = OPTIONAL_BIT.get(key);
    if (bit !== undefined) {
      if (row[key as EventColumn] !== undefined) shape |= bit;
    } else if (!REQUIRED_COLUMNS.has(key)) {
      throw new Error(`an events row has a field the table does not have: ${key}`);
    }
  }
  return shape;
}

function fieldOf(value: EventRow[EventColumn]): string {
  return typeof value === 'string' ? escapeTsvField(value) : String(value);
}

/**
 * One body per set of columns, so a left-out column takes its default. Not JSONEachRow: it would
 * escape every quote of the JSON-in-string columns, which ClickHouse then unescapes.
 */
export function eventRowsAsTsv(rows: readonly EventRow[]): EventsTsv[] {
  const byShape = new Map<number, { columns: EventColumn[]; lines: string[] }>();
  for (const row of rows) {
    const shape = shapeOf(row);
    let group = byShape.get(shape);
    if (!group) {
      const columns = EVENTS_TABLE_COLUMNS.filter((column) => {
        const bit = OPTIONAL_BIT.get(column);
        return bit === undefined || (shape & bit) !== 0;
      });
      group = { columns, lines: [] };
      byShape.set(shape, group);
    }
    const { columns } = group;
    let line = fieldOf(row[columns[0]]);
    for (let index = 1; index < columns.length; index += 1) line += `\t${fieldOf(row[columns[index]])}`;
    group.lines.push(line);
  }
  return [...byShape.values()].map(({ columns, lines }) => ({
    columns,
    body: `${lines.join('\n')}\n`,
    rows: lines.length,
  }));
}
