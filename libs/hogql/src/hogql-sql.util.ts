import type { AstNode } from './hogql-ast.util';
import type { HogQLError, HogQLErrorKind } from './hogql.errors';
import type { QueryParams } from './query-params.util';

/**
 * Enough to refuse what ClickHouse would reject at run time. `property` is JSON text, read as a
 * number (`toFloat64OrNull`) where one is needed.
 */
export type SqlType =
  'string' | 'property' | 'number' | 'bool' | 'datetime' | 'date' | 'uuid' | 'interval' | 'null';

export interface SqlExpr {
  sql: string;
  type: SqlType;
  nullable: boolean;
  aggregate: boolean;
  /** A literal from the request (a bound parameter, or true/false/NULL). */
  literal: boolean;
}

export function sqlExpr(
  sql: string,
  type: SqlType,
  options: { nullable?: boolean; aggregate?: boolean; literal?: boolean } = {},
): SqlExpr {
  return {
    sql,
    type,
    nullable: options.nullable ?? false,
    aggregate: options.aggregate ?? false,
    literal: options.literal ?? false,
  };
}

export function anyAggregate(parts: readonly SqlExpr[]): boolean {
  return parts.some((part) => part.aggregate);
}

export function anyNullable(parts: readonly SqlExpr[]): boolean {
  return parts.some((part) => part.nullable);
}

export function isStringLike(type: SqlType): boolean {
  return type === 'string' || type === 'property';
}

export function isNumberLike(type: SqlType): boolean {
  return type === 'number' || type === 'bool';
}

export function isTemporal(type: SqlType): boolean {
  return type === 'datetime' || type === 'date';
}

export const TYPE_NAMES: Readonly<Record<SqlType, string>> = {
  string: 'a string',
  property: 'a property',
  number: 'a number',
  bool: 'a boolean',
  datetime: 'a date-time',
  date: 'a date',
  uuid: 'a UUID',
  interval: 'an interval',
  null: 'NULL',
};

/** Properties convert to numbers and date-times; string columns and string literals do not. */
export function commonSqlType(types: readonly SqlType[]): SqlType | undefined {
  const present = new Set(types.filter((type) => type !== 'null'));
  const within = (...allowed: SqlType[]): boolean => [...present].every((type) => allowed.includes(type));
  if (present.size === 0) return 'null';
  if (within('property')) return 'property';
  if (within('string', 'property')) return 'string';
  if (within('bool')) return 'bool';
  if (within('number', 'bool')) return 'number';
  if (within('date')) return 'date';
  if (within('datetime', 'date')) return 'datetime';
  if (within('uuid')) return 'uuid';
  if (within('interval')) return 'interval';
  if (within('number', 'bool', 'property')) return 'number';
  if (within('datetime', 'date', 'property')) return 'datetime';
  if (within('uuid', 'string', 'property')) return 'string';
  return undefined;
}

export function coerceTo(part: SqlExpr, type: SqlType): SqlExpr {
  if (part.type === type || part.type === 'null') return part;
  const options = { nullable: part.nullable, aggregate: part.aggregate, literal: part.literal };
  switch (type) {
    case 'number':
      if (part.type === 'bool') return { ...part, type: 'number' };
      return sqlExpr(`toFloat64OrNull(${part.sql})`, 'number', { ...options, nullable: true });
    case 'string':
      if (part.type === 'property') return { ...part, type: 'string' };
      return sqlExpr(`toString(${part.sql})`, 'string', options);
    case 'datetime':
      if (part.type === 'date') return sqlExpr(`toDateTime64(${part.sql}, 6, 'UTC')`, 'datetime', options);
      return sqlExpr(`parseDateTime64BestEffortOrNull(${part.sql}, 6, 'UTC')`, 'datetime', {
        ...options,
        nullable: true,
      });
    default:
      return part;
  }
}

export type CompareOperator = '==' | '!=' | '<' | '<=' | '>' | '>=';
export type PatternOperator = 'like' | 'ilike' | 'not like' | 'not ilike' | '=~' | '!~' | '=~*' | '!~*';
export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%';

export interface ExpressionCompiler {
  readonly params: QueryParams;
  value(node: AstNode): SqlExpr;
  /** A number is true when non-zero, NULL false. */
  condition(node: AstNode): SqlExpr;
  /** A string argument; properties stay strings; NULL is allowed. */
  stringArgument(node: AstNode, functionName: string): SqlExpr;
  /** A numeric argument; properties and strings are read with `toFloat64OrNull`. */
  numberArgument(node: AstNode, functionName: string): SqlExpr;
  /** A date or date-time argument; strings are parsed (a literal must be a valid date-time). */
  dateTimeArgument(node: AstNode, functionName: string): SqlExpr;
  /** A literal integer, bound as a parameter; returns the SQL and the value. */
  integerLiteral(node: AstNode, functionName: string): { sql: string; value: number };
  /** A literal string's value (not bound: the caller decides what to do with it). */
  stringLiteral(node: AstNode, functionName: string): string;
  /** A literal RE2 pattern, checked and bound as a parameter. `prefix` is prepended (`(?i)`). */
  regexLiteral(node: AstNode, functionName: string, prefix?: string): string;
  likeLiteral(node: AstNode, functionName: string): string;
  compare(operator: CompareOperator | PatternOperator, left: AstNode, right: AstNode, node: AstNode): SqlExpr;
  arithmetic(operator: ArithmeticOperator, left: AstNode, right: AstNode, node: AstNode): SqlExpr;
  /** The common type of values that must agree (if branches, coalesce arguments). */
  commonType(parts: readonly SqlExpr[], what: string, node: AstNode): SqlType;
  /** Runs `compile` as the inside of an aggregate (refuses nested aggregates). */
  insideAggregate<T>(functionName: string, node: AstNode, compile: () => T): T;
  error(message: string, node: AstNode, kind?: HogQLErrorKind): HogQLError;
}
