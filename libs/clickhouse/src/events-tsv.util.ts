import { EVENTS_TABLE_COLUMNS, type EventRow } from './event-row';

export type EventColumn = (typeof EVENTS_TABLE_COLUMNS)[number];

/** The columns every row carries; each of the others a row may leave out, for its default. */
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

/** Rows that carry the same columns, as one TabSeparated body. */
export interface EventsTsv {
  /** The body's columns in table order. */
  columns: EventColumn[];
  /** One line per row, each ending with a newline. */
  body: string;
  rows: number;
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPED: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * A string as a TabSeparated field: a backslash, tab, newline or carriage return is written as its
 * escape sequence, everything else as is. (Written raw, a backslash would start an escape, a tab
 * or newline end the field.)
 */
export function escapeTsvField(value: string): string {
  return SPECIAL.test(value) ? value.replace(SPECIAL_ALL, (char) => ESCAPED[char]) : value;
}

/**
 * Which optional columns the row carries, one bit each, in one pass over its fields. A field the
 * table does not have is an error (a misspelt column must not be dropped silently).
 */
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
 * Event rows as ClickHouse TabSeparated input, one body per set of columns the rows carry (in
 * first-seen order), so that a column a row leaves out still takes its default. Ingestion's rows
 * all carry the same columns: one body.
 *
 * Why not JSONEachRow: the JSON columns (`properties`, `person_properties`) are strings holding
 * JSON, and a JSON row would escape every quote in them, which ClickHouse then unescapes; here
 * they go as written.
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
