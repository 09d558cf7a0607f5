import {
  childNode,
  fieldChain,
  isAstNode,
  isAstParseError,
  measureAst,
  stringField,
  type AstNode,
} from './hogql-ast.util';
import { EVENTS_TABLE_COLUMNS } from '@hogbase/clickhouse';
import { HogQLCompiler } from './hogql-compiler.util';
import { HogQLError, quoteExpression, type HogQLErrorKind } from './hogql.errors';
import { EVENT_FIELDS, STAR_FIELDS } from './hogql-fields.util';
import { checkExpressionText, DEFAULT_HOGQL_LIMITS } from './hogql-limits.util';
import type { HogQLParser } from './hogql-parser.util';
import { QueryParams } from './query-params.util';

/**
 * A batch export's `hogql_query`, validated as `posthog/batch_exports/http.py` does. PostHog ignores
 * all but the select list; here other clauses are refused, since an ignored WHERE would export more.
 */

/** PostHog's messages, word for word. */
export const BATCH_EXPORT_QUERY_ERRORS = {
  parse: 'Failed to parse query',
  union: 'UNIONs are not supported',
  noFrom: 'Query must SELECT FROM events',
  notEvents: 'Query must only SELECT FROM events',
  join: 'JOINs are not supported',
  ctes: 'CTEs are not supported',
  subquery: 'Subqueries are not supported',
  selectSubquery: 'Subqueries in SELECT expressions are not supported',
} as const;

const INVALID_PREFIX = 'Invalid HogQL query: ';

/** As PostHog stores it in `schema.fields`. */
export interface BatchExportField {
  expression: string;
  /** The `AS` name, else derived from the expression as PostHog derives it. */
  alias: string;
}

export interface BatchExportColumn {
  alias: string;
  sql: string;
  /** `<sql> AS <alias quoted as a ClickHouse identifier>`, for a SELECT list. */
  selectSql: string;
}

export interface CompiledBatchExportQuery {
  fields: BatchExportField[];
  columns: BatchExportColumn[];
  params: QueryParams;
}

export interface BatchExportQueryLimits {
  /** Code points. */
  maxQueryLength: number;
  maxQueryTokens: number;
  /** Nesting of `(`, `[` and `{`. */
  maxNestingDepth: number;
  /** Columns, after `*` is expanded. */
  maxColumns: number;
  maxAstDepth: number;
  maxAstNodes: number;
  maxAliasLength: number;
  /** A select list parses far slower than one expression. */
  parseTimeoutMs: number;
}

export const DEFAULT_BATCH_EXPORT_QUERY_LIMITS: Readonly<BatchExportQueryLimits> = {
  maxQueryLength: 20_000,
  maxQueryTokens: 4_000,
  maxNestingDepth: DEFAULT_HOGQL_LIMITS.maxNestingDepth,
  maxColumns: 100,
  maxAstDepth: DEFAULT_HOGQL_LIMITS.maxAstDepth,
  maxAstNodes: DEFAULT_HOGQL_LIMITS.maxAstNodes,
  maxAliasLength: 255,
  parseTimeoutMs: 5_000,
};

export interface BatchExportQueryOptions {
  params?: QueryParams;
  limits?: Partial<BatchExportQueryLimits>;
}

/** SELECT clauses other than the select list and FROM, by the parser's key. */
const CLAUSE_NAMES: Readonly<Record<string, string>> = {
  where: 'WHERE',
  prewhere: 'PREWHERE',
  group_by: 'GROUP BY',
  having: 'HAVING',
  qualify: 'QUALIFY',
  order_by: 'ORDER BY',
  limit: 'LIMIT',
  offset: 'OFFSET',
  limit_by: 'LIMIT BY',
  limit_with_ties: 'WITH TIES',
  distinct: 'DISTINCT',
  window_exprs: 'WINDOW',
  array_join_op: 'ARRAY JOIN',
  array_join_list: 'ARRAY JOIN',
  settings: 'SETTINGS',
  table_final: 'FINAL',
  sample: 'SAMPLE',
  column_aliases: 'Column aliases',
};

const SELECT_QUERY_KEYS = new Set(['node', 'start', 'end', 'select', 'select_from', 'ctes']);
const JOIN_EXPR_KEYS = new Set(['node', 'start', 'end', 'table', 'alias', 'next_join', 'constraint']);

interface SelectItem {
  /** The expression without its alias, table names removed from its fields. */
  expression: AstNode;
  alias: string | null;
}

interface ColumnSource {
  field: BatchExportField;
  /** What to compile; undefined for `*`'s columns, which are plain event columns. */
  expression: AstNode | undefined;
  explicitAlias: boolean;
}

/** HogQLErrors carry PostHog's message where it has one; other throws are not the user's fault. */
export async function compileBatchExportQuery(
  parser: HogQLParser,
  text: string,
  options: BatchExportQueryOptions = {},
): Promise<CompiledBatchExportQuery> {
  const limits: BatchExportQueryLimits = { ...DEFAULT_BATCH_EXPORT_QUERY_LIMITS, ...options.limits };
  const params = options.params ?? new QueryParams();
  const query = await parseQuery(parser, text, limits);
  const { items, tableName } = checkStructure(query);
  const codePoints = Array.from(text);
  const sources = items.flatMap((node) => columnSources(node, tableName, codePoints, limits));
  if (sources.length > limits.maxColumns) {
    throw invalid(`A batch export query selects at most ${limits.maxColumns} columns`, 'limit');
  }

  const compiler = new HogQLCompiler({ parser });
  const fields: BatchExportField[] = [];
  const columns: BatchExportColumn[] = [];
  const explicitAliases = new Set<string>();
  const aliases = new Set<string>();
  for (const [index, source] of sources.entries()) {
    const sql = source.expression
      ? compileColumn(compiler, text, source, index, params)
      : EVENT_FIELDS.get(source.field.expression)!.sql;
    const { alias } = source.field;
    checkAlias(alias, sql, source, limits);
    if (aliases.has(alias)) {
      throw invalid(
        source.explicitAlias && explicitAliases.has(alias)
          ? `Cannot redefine an alias with the name: ${alias}`
          : `More than one column is named ${quoteExpression(alias)}: name them apart with AS`,
        'unsupported',
      );
    }
    aliases.add(alias);
    if (source.explicitAlias) explicitAliases.add(alias);
    fields.push(source.field);
    columns.push({ alias, sql, selectSql: `${sql} AS ${quoteClickHouseIdentifier(alias)}` });
  }
  return { fields, columns, params };
}

/** A name as a ClickHouse identifier: backquoted, backslashes and backquotes escaped. */
export function quoteClickHouseIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

async function parseQuery(
  parser: HogQLParser,
  text: string,
  limits: BatchExportQueryLimits,
): Promise<AstNode> {
  if (typeof text !== 'string') throw fail(BATCH_EXPORT_QUERY_ERRORS.parse, 'syntax');
  if (Array.from(text).length > limits.maxQueryLength) {
    throw invalid(`The query is longer than ${limits.maxQueryLength} characters`, 'limit');
  }
  try {
    checkExpressionText(text, {
      ...DEFAULT_HOGQL_LIMITS,
      maxExpressionLength: limits.maxQueryLength,
      maxTokens: limits.maxQueryTokens,
      maxNestingDepth: limits.maxNestingDepth,
    });
  } catch (error) {
    throw asQueryError(error);
  }
  let parsed: unknown;
  try {
    parsed = await parser.parseSelect(text, limits.parseTimeoutMs);
  } catch (error) {
    // A crash of the parser is a parse failure, as any exception of PostHog's parse_select is.
    throw asQueryError(error);
  }
  if (isAstParseError(parsed) || !isAstNode(parsed)) throw fail(BATCH_EXPORT_QUERY_ERRORS.parse, 'syntax');
  return parsed;
}

/** PostHog's checks in its order, then the clauses PostHog would ignore. */
function checkStructure(query: AstNode): { items: AstNode[]; tableName: string } {
  if (query.node === 'SelectSetQuery') throw fail(BATCH_EXPORT_QUERY_ERRORS.union, 'unsupported');
  if (query.node !== 'SelectQuery') throw fail(BATCH_EXPORT_QUERY_ERRORS.parse, 'syntax');
  const from = childNode(query, 'select_from');
  if (!from) throw fail(BATCH_EXPORT_QUERY_ERRORS.noFrom, 'unsupported');
  if (isPresent(query.ctes)) throw fail(BATCH_EXPORT_QUERY_ERRORS.ctes, 'unsupported');
  const table = childNode(from, 'table');
  if (table?.node === 'SelectQuery' || table?.node === 'SelectSetQuery') {
    throw fail(BATCH_EXPORT_QUERY_ERRORS.subquery, 'unsupported');
  }
  const chain = table?.node === 'Field' ? fieldChain(table) : undefined;
  // `events(…)` is a table function call, not the events table.
  if (chain?.length !== 1 || chain[0] !== 'events' || isPresent(from.table_args)) {
    throw fail(BATCH_EXPORT_QUERY_ERRORS.notEvents, 'unsupported');
  }
  if (isPresent(from.next_join)) throw fail(BATCH_EXPORT_QUERY_ERRORS.join, 'unsupported');
  const select = query.select;
  const items = Array.isArray(select) ? select.filter(isAstNode) : [];
  if (items.length === 0 || items.length !== (select as unknown[]).length) {
    throw fail(BATCH_EXPORT_QUERY_ERRORS.parse, 'syntax');
  }
  if (items.some(containsSubquery)) throw fail(BATCH_EXPORT_QUERY_ERRORS.selectSubquery, 'unsupported');
  refuseClauses(query, SELECT_QUERY_KEYS);
  refuseClauses(from, JOIN_EXPR_KEYS);
  return { items, tableName: stringField(from, 'alias') ?? 'events' };
}

function refuseClauses(node: AstNode, allowed: ReadonlySet<string>): void {
  for (const [key, value] of Object.entries(node)) {
    if (allowed.has(key) || !isPresent(value)) continue;
    const clause = Object.hasOwn(CLAUSE_NAMES, key)
      ? CLAUSE_NAMES[key]
      : key.replace(/_/g, ' ').toUpperCase();
    throw fail(
      `${clause} is not supported in batch export queries: only the SELECT list is exported`,
      'unsupported',
    );
  }
}

function isPresent(value: unknown): boolean {
  if (value === null || value === undefined || value === false) return false;
  return !Array.isArray(value) || value.length > 0;
}

function containsSubquery(root: AstNode): boolean {
  let found = false;
  walkNodes(root, (node) => {
    if (node.node === 'SelectQuery' || node.node === 'SelectSetQuery') found = true;
    return !found;
  });
  return found;
}

/** Iterative, so a deep tree cannot blow the stack; `visit` answers whether to descend. */
function walkNodes(root: AstNode, visit: (node: AstNode) => boolean): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      stack.push(...(value as unknown[]));
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (isAstNode(value) && !visit(value)) continue;
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (key !== 'start' && key !== 'end' && typeof child === 'object' && child !== null) stack.push(child);
    }
  }
}

/** The columns one select item stands for: `*` is every STAR_FIELDS column, anything else one. */
function columnSources(
  node: AstNode,
  tableName: string,
  codePoints: readonly string[],
  limits: BatchExportQueryLimits,
): ColumnSource[] {
  const { depth, nodes } = measureAst(node);
  if (depth > limits.maxAstDepth || nodes > limits.maxAstNodes) {
    throw invalid(`Expression ${quoteExpression(sourceText(node, codePoints))} is too complex`, 'limit');
  }
  const unqualified: UnqualifiedTexts = new WeakMap();
  const item = selectItem(node, tableName, codePoints, unqualified);
  const chain = item.expression.node === 'Field' ? fieldChain(item.expression) : undefined;
  if (item.alias === null && chain?.length === 1 && chain[0] === '*') {
    return STAR_FIELDS.map((name) => ({
      field: { expression: name, alias: name },
      expression: undefined,
      explicitAlias: false,
    }));
  }
  if (chain?.length === 1 && chain[0] === 'person') {
    throw invalid(
      `person is not a column: select person.id, person.properties.<key> or person.created_at`,
      'unsupported',
    );
  }
  const expression = expressionText(item.expression, codePoints, unqualified);
  const alias = item.alias ?? derivedAlias(item.expression, expression);
  return [
    {
      field: { expression, alias },
      expression: item.expression,
      explicitAlias: item.alias !== null,
    },
  ];
}

function selectItem(
  node: AstNode,
  tableName: string,
  codePoints: readonly string[],
  unqualified: UnqualifiedTexts,
): SelectItem {
  let expression = node;
  let alias: string | null = null;
  if (node.node === 'Alias') {
    const inner = childNode(node, 'expr');
    alias = stringField(node, 'alias') ?? null;
    if (!inner || alias === null) throw fail(BATCH_EXPORT_QUERY_ERRORS.parse, 'syntax');
    expression = inner;
  }
  removeTableName(expression, tableName, codePoints, unqualified);
  return { expression, alias };
}

type UnqualifiedTexts = WeakMap<AstNode, string>;

/**
 * `events.event` (or `e.event` under `FROM events AS e`) reads the field `event`, as in PostHog.
 * Rewrites the fields in place and records each one's text without the table name.
 */
function removeTableName(
  root: AstNode,
  tableName: string,
  codePoints: readonly string[],
  unqualified: UnqualifiedTexts,
): void {
  walkNodes(root, (node) => {
    const chain = node.node === 'Field' ? fieldChain(node) : undefined;
    if (!chain || chain.length < 2 || chain[0] !== tableName) return true;
    node.chain = chain.slice(1);
    unqualified.set(node, unqualifiedText(node, tableName, codePoints));
    return false;
  });
}

function unqualifiedText(field: AstNode, tableName: string, codePoints: readonly string[]): string {
  const written = sourceText(field, codePoints);
  const name = escapeRegExp(tableName);
  const prefix = new RegExp(`^(?:${name}|\`${name}\`|"${name}")\\s*\\.\\s*`, 'u');
  const match = prefix.exec(written);
  if (!match) {
    throw invalid(
      `Write ${quoteExpression(written)} without the table name: the query reads only events`,
      'unsupported',
    );
  }
  return written.slice(match[0].length);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function expressionText(
  expression: AstNode,
  codePoints: readonly string[],
  unqualified: UnqualifiedTexts,
): string {
  const { start, end } = span(expression);
  const replacements: { start: number; end: number; text: string }[] = [];
  walkNodes(expression, (node) => {
    const text = unqualified.get(node);
    if (text !== undefined) replacements.push({ ...span(node), text });
    return text === undefined;
  });
  replacements.sort((left, right) => left.start - right.start);
  let text = '';
  let position = start;
  for (const replacement of replacements) {
    text += codePoints.slice(position, replacement.start).join('') + replacement.text;
    position = replacement.end;
  }
  return (text + codePoints.slice(position, end).join('')).trim();
}

function span(node: AstNode): { start: number; end: number } {
  const start = node.start?.offset;
  const end = node.end?.offset;
  // parseSelect positions every node written in the text; only made-up nodes (the 0 of `-x`) lack them.
  if (typeof start !== 'number' || typeof end !== 'number' || end < start) {
    throw new Error(`The HogQL parser gave a ${node.node} node without a position`);
  }
  return { start, end };
}

function sourceText(node: AstNode, codePoints: readonly string[]): string {
  const { start, end } = span(node);
  return codePoints.slice(start, end).join('');
}

/**
 * PostHog names anything but a field or property after its printed ClickHouse SQL; here it is
 * named after its HogQL text, white space collapsed.
 */
function derivedAlias(expression: AstNode, text: string): string {
  const chain = propertyChain(expression);
  if (chain) {
    if (chain[0] === 'properties' && chain.length > 1) return chain.slice(1).join('__');
    if (chain[0] === 'person' && chain[1] === 'properties' && chain.length > 2)
      return chain.slice(2).join('__');
    return chain[chain.length - 1];
  }
  return text.replace(/\s+/gu, ' ');
}

/** `a.b.c` and `a['b']['c']` as one chain (PostHog names both alike here). */
function propertyChain(node: AstNode): string[] | undefined {
  if (node.node === 'Field') return fieldChain(node);
  if (node.node !== 'ArrayAccess') return undefined;
  const base = childNode(node, 'array');
  const key = childNode(node, 'property');
  const keyValue = key?.node === 'Constant' ? key.value : undefined;
  if (!base || typeof keyValue !== 'string') return undefined;
  const baseChain = propertyChain(base);
  return baseChain ? [...baseChain, keyValue] : undefined;
}

function compileColumn(
  compiler: HogQLCompiler,
  text: string,
  source: ColumnSource,
  index: number,
  params: QueryParams,
): string {
  const expression = source.expression!;
  let column;
  try {
    column = compiler.compileParsedSelect(text, expression, index, params);
  } catch (error) {
    if (error instanceof HogQLError) throw invalid(error.message, error.kind, error.expression);
    throw error;
  }
  if (column.kind !== 'expression') {
    throw invalid(
      `${quoteExpression(source.field.expression)} cannot be exported as a column`,
      'unsupported',
    );
  }
  if (column.isAggregation) {
    throw invalid(
      `Aggregations are not supported in batch export queries (each exported row is one event): ${quoteExpression(source.field.expression)}`,
      'unsupported',
      source.field.expression,
    );
  }
  return column.sql;
}

function checkAlias(alias: string, sql: string, source: ColumnSource, limits: BatchExportQueryLimits): void {
  const named = (problem: string): HogQLError =>
    invalid(
      `The column name ${quoteExpression(alias)} ${problem}` +
        (source.explicitAlias ? '' : `: name ${quoteExpression(source.field.expression)} with AS`),
      'value',
      source.field.expression,
    );
  if (alias === '') throw invalid('Alias cannot be empty', 'syntax', source.field.expression);
  if (Array.from(alias).length > limits.maxAliasLength) {
    throw named(`is longer than ${limits.maxAliasLength} characters`);
  }
  // Control characters and lone surrogates would not survive as a column name in every
  // destination (and a lone surrogate not even the trip to ClickHouse as UTF-8).
  if (/[\p{Cc}\p{Cs}]/u.test(alias)) throw named('contains control characters');
  // SECURITY: ClickHouse substitutes a SELECT alias for a same-named column in WHERE, so
  // `toInt64(1) AS team_id` would match every project's events.
  if ((EVENTS_TABLE_COLUMNS as readonly string[]).includes(alias) && EVENT_FIELDS.get(alias)?.sql !== sql) {
    throw named('is the name of a column of the events table and may only name that column');
  }
}

function fail(message: string, kind: HogQLErrorKind, expression?: string): HogQLError {
  return new HogQLError(message, { kind, attr: 'hogql_query', expression });
}

/** PostHog reports these as `Invalid HogQL query: …`. */
function invalid(message: string, kind: HogQLErrorKind, expression?: string): HogQLError {
  return fail(`${INVALID_PREFIX}${message}`, kind, expression);
}

/** A text or parse error: syntax errors are PostHog's parse failure, limits name themselves. */
function asQueryError(error: unknown): unknown {
  if (!(error instanceof HogQLError)) return error;
  if (error.kind === 'syntax') return fail(BATCH_EXPORT_QUERY_ERRORS.parse, 'syntax', error.expression);
  return invalid(error.message, error.kind, error.expression);
}
