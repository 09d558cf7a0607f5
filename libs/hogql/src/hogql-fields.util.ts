import { sqlExpr, type SqlExpr, type SqlType } from './hogql-sql.util';
import type { QueryParams } from './query-params.util';

/**
 * SECURITY: `team_id` is absent on purpose (the API scopes every query itself), as are ingestion's
 * `_timestamp` and `_offset`.
 */
export interface ColumnField {
  /** Already quoted where it needs to be. */
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
 * The JSON value as text, NULL when missing or `null`. NOTE: PostHog strips the quotes off
 * JSONExtractRaw, which keeps a string's escapes; this gives the same text otherwise (ClickHouse >= 21.9).
 */
export function propertyExpr(column: JsonColumn, path: readonly string[], params: QueryParams): SqlExpr {
  const keys = path.map((key) => params.string(key)).join(', ');
  return sqlExpr(`JSONExtract(${column}, ${keys}, 'Nullable(String)')`, 'property', {
    nullable: true,
  });
}

/** `*` in `select`, in this order. */
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

/** `person` in `select`, the tuple PostHog's listing returns. */
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
