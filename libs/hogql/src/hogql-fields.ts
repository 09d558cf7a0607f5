import { sqlExpr, type SqlExpr, type SqlType } from './hogql-sql';
import type { QueryParams } from './query-params';

/**
 * The events table columns a HogQL expression may read, by the name the user writes. `team_id`
 * is deliberately absent (the API scopes every query to the project itself), as are the
 * ingestion bookkeeping columns `_timestamp` and `_offset`.
 */
export interface ColumnField {
  /** The column as it appears in SQL (already quoted where it needs to be). */
  sql: string;
  type: SqlType;
}

// NOTE: Maps, not object literals: a lookup of `constructor` or `__proto__` must find nothing.
export const EVENT_FIELDS: ReadonlyMap<string, ColumnField> = new Map(
  Object.entries({
    uuid: { sql: 'uuid', type: 'uuid' },
    id: { sql: 'uuid', type: 'uuid' },
    event: { sql: 'event', type: 'string' },
    distinct_id: { sql: 'distinct_id', type: 'string' },
    timestamp: { sql: 'timestamp', type: 'datetime' },
    created_at: { sql: 'created_at', type: 'datetime' },
    elements_chain: { sql: 'elements_chain', type: 'string' },
    properties: { sql: 'properties', type: 'string' },
    person_id: { sql: 'person_id', type: 'uuid' },
    person_created_at: { sql: 'person_created_at', type: 'datetime' },
    person_properties: { sql: 'person_properties', type: 'string' },
    $group_0: { sql: '`$group_0`', type: 'string' },
    $group_1: { sql: '`$group_1`', type: 'string' },
    $group_2: { sql: '`$group_2`', type: 'string' },
    $group_3: { sql: '`$group_3`', type: 'string' },
    $group_4: { sql: '`$group_4`', type: 'string' },
  } satisfies Record<string, ColumnField>),
);

/** `person.<field>`: the person columns denormalized onto each event. */
export const PERSON_FIELDS: ReadonlyMap<string, ColumnField> = new Map(
  Object.entries({
    id: { sql: 'person_id', type: 'uuid' },
    created_at: { sql: 'person_created_at', type: 'datetime' },
    properties: { sql: 'person_properties', type: 'string' },
  } satisfies Record<string, ColumnField>),
);

/** Columns that hold JSON objects whose keys HogQL reads as `<column>.<key>`. */
export type JsonColumn = 'properties' | 'person_properties';

/** Names refused with a message saying why, instead of "unknown field". */
export const FORBIDDEN_FIELDS: ReadonlyMap<string, string> = new Map([
  ['team_id', 'The field team_id cannot be selected or filtered on (the project comes from the URL)'],
  ['_timestamp', 'The field _timestamp is internal'],
  ['_offset', 'The field _offset is internal'],
]);

export const MAX_PROPERTY_PATH = 10;

/**
 * A property as HogQL reads it: the JSON value as text, NULL when the key is missing or the value
 * is JSON `null`. `{"a": "x"}` reads `x` (unescaped), `{"a": 1.5}` reads `1.5`, `{"a": true}`
 * reads `true`, `{"a": {"b": 1}}` reads `{"b":1}`. Keys are bound as parameters, so any key is safe.
 *
 * NOTE: PostHog's printer strips the quotes off JSONExtractRaw instead, which leaves a string's
 * JSON escapes in (`"say \"hi\""` reads `say \"hi\"`); JSONExtract to Nullable(String) gives
 * the same text for every other value and the real text for strings (ClickHouse >= 21.9).
 */
export function propertyExpr(column: JsonColumn, path: readonly string[], params: QueryParams): SqlExpr {
  const keys = path.map((key) => params.string(key)).join(', ');
  return sqlExpr(`JSONExtract(${column}, ${keys}, 'Nullable(String)')`, 'property', {
    nullable: true,
  });
}

/** `*` in `select`: the event's columns as one tuple (team_id left out), in this order. */
export const STAR_FIELDS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'distinct_id',
  'elements_chain',
  'created_at',
  'person_id',
  'person_created_at',
  'person_properties',
] as const;

/**
 * `person` in `select`: `(distinct_id, person_id, person_created_at, name, email)`, the tuple
 * PostHog's experimental listing returned, name and email read from the person's properties.
 */
export const PERSON_TUPLE_FIELDS = [
  'distinct_id',
  'person_id',
  'person_created_at',
  'person.properties.name',
  'person.properties.email',
] as const;

export function personTupleSql(params: QueryParams): string {
  const name = propertyExpr('person_properties', ['name'], params).sql;
  const email = propertyExpr('person_properties', ['email'], params).sql;
  return `tuple(distinct_id, person_id, person_created_at, ${name}, ${email})`;
}
