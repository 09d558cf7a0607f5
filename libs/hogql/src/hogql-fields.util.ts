import type { AstNode } from './hogql-ast.util';
import type { HogQLError } from './hogql.errors';
import { sqlExpr, type SqlExpr, type SqlType } from './hogql-sql.util';
import type { QueryParams } from './query-params.util';

/** What the printer asks of a scope: the column or property a field chain names. */
export interface FieldResolver {
  /** `chain` has no `*`; an unknown or forbidden name throws `context.error(…)`. */
  resolve(chain: readonly string[], node: AstNode, context: FieldContext): SqlExpr;
}

/** The printer's part a resolver uses. */
export interface FieldContext {
  property(column: string, path: readonly string[], node: AstNode): SqlExpr;
  error(message: string, node: AstNode): HogQLError;
}

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

/** Names refused with a message saying why, instead of "unknown field". */
export const FORBIDDEN_FIELDS: ReadonlyMap<string, string> = new Map([
  ['team_id', 'The field team_id cannot be selected or filtered on (the project comes from the URL)'],
  ['_timestamp', 'The field _timestamp is internal'],
  ['_offset', 'The field _offset is internal'],
]);

export const MAX_PROPERTY_PATH = 10;

/**
 * The event listing's fields: the events table's columns unqualified, `properties.x`, and the person
 * of the event as `person.properties.x`, `person.id`, `person.created_at`.
 */
export const EVENT_LISTING_FIELDS: FieldResolver = {
  resolve(chain, node, context) {
    const [head, ...rest] = chain;
    const forbidden = FORBIDDEN_FIELDS.get(head);
    if (forbidden !== undefined) throw context.error(forbidden, node);
    if (rest.length === 0) {
      if (head === 'person')
        throw context.error('person is only allowed on its own as a select expression', node);
      const column = EVENT_FIELDS.get(head);
      if (!column) throw context.error('Unknown field', node);
      return sqlExpr(column.sql, column.type);
    }
    if (head === 'properties') return context.property('properties', rest, node);
    if (head === 'person') {
      const [second, ...more] = rest;
      if (second === 'properties' && more.length > 0)
        return context.property('person_properties', more, node);
      const column = more.length === 0 ? PERSON_FIELDS.get(second) : undefined;
      if (column) return sqlExpr(column.sql, column.type);
    }
    const forbiddenPart = chain.find((part) => FORBIDDEN_FIELDS.has(part));
    if (forbiddenPart !== undefined) throw context.error(FORBIDDEN_FIELDS.get(forbiddenPart)!, node);
    throw context.error('Unknown field', node);
  },
};

/**
 * The JSON value as text, NULL when missing or `null`. NOTE: PostHog strips the quotes off
 * JSONExtractRaw, which keeps a string's escapes; this gives the same text otherwise (ClickHouse >= 21.9).
 */
export function propertyExpr(column: string, path: readonly string[], params: QueryParams): SqlExpr {
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
