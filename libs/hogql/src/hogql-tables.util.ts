import type { AstNode } from './hogql-ast.util';
import {
  EVENT_FIELDS,
  FORBIDDEN_FIELDS,
  PERSON_FIELDS,
  STAR_FIELDS,
  type ColumnField,
  type FieldContext,
} from './hogql-fields.util';
import { sqlExpr, type SqlExpr } from './hogql-sql.util';

/** A table a HogQL statement may name, and how one of its rows is read. */
export interface HogQLTable {
  readonly name: string;
  /** `*`, in this order. */
  readonly star: readonly string[];
  /** The field `chain` names on a row of this table known as `alias` in the SQL; undefined if none. */
  field(alias: string, chain: readonly string[], node: AstNode, context: FieldContext): SqlExpr | undefined;
  /**
   * SECURITY: the only SQL that reads the table: one project's rows, selected by a bound parameter.
   * Every reference to the table in a statement becomes this subquery, so no join, alias or
   * subquery of the statement can reach another project's rows or the `team_id` column.
   */
  source(database: string, teamParam: string): string;
}

const EVENT_SOURCE_COLUMNS = [...new Set([...EVENT_FIELDS.values()].map((field) => field.sql))];

/** PostHog's `events` table, persons on events: `person.properties.x` is the person at the time. */
export const EVENTS_TABLE: HogQLTable = {
  name: 'events',
  star: STAR_FIELDS.filter((name) => name !== 'person_properties'),
  field(alias, chain, node, context) {
    const [head, ...rest] = chain;
    const qualified = (column: ColumnField): SqlExpr => sqlExpr(`${alias}.${column.sql}`, column.type);
    if (rest.length === 0) {
      const column = EVENT_FIELDS.get(head);
      return column ? qualified(column) : undefined;
    }
    if (head === 'properties') return context.property(`${alias}.properties`, rest, node);
    if (head === 'person') {
      const [second, ...more] = rest;
      if (second === 'properties' && more.length > 0) {
        return context.property(`${alias}.person_properties`, more, node);
      }
      const column = more.length === 0 ? PERSON_FIELDS.get(second) : undefined;
      if (column) return qualified(column);
    }
    return undefined;
  },
  source(database, teamParam) {
    return `SELECT ${EVENT_SOURCE_COLUMNS.join(', ')} FROM ${database}.events FINAL WHERE team_id = ${teamParam}`;
  },
};

// NOTE: a Map, so that `constructor` or `__proto__` names no table.
export const HOGQL_TABLES: ReadonlyMap<string, HogQLTable> = new Map([['events', EVENTS_TABLE]]);

/** Why a name is refused, when it is one a user may try. */
export function forbiddenFieldReason(chain: readonly string[]): string | undefined {
  const part = chain.find((name) => FORBIDDEN_FIELDS.has(name));
  return part === undefined ? undefined : FORBIDDEN_FIELDS.get(part);
}
