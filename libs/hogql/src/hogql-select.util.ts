import {
  childNode,
  childNodes,
  constantValue,
  fieldChain,
  isAstNode,
  isAstParseError,
  measureAst,
  stringField,
  type AstNode,
} from './hogql-ast.util';
import { HogQLError, quoteExpression } from './hogql.errors';
import type { FieldContext, FieldResolver } from './hogql-fields.util';
import { checkExpressionText, resolveLimits, type HogQLLimits } from './hogql-limits.util';
import { sharedHogQLParser, type HogQLParser } from './hogql-parser.util';
import { HogQLPrinter } from './hogql-printer.util';
import { sqlExpr, type SqlExpr, type SqlType } from './hogql-sql.util';
import { forbiddenFieldReason, HOGQL_TABLES, type HogQLTable } from './hogql-tables.util';
import type { QueryParams } from './query-params.util';

/** PostHog's `DEFAULT_RETURNED_ROWS` and `MAX_SELECT_RETURNED_ROWS` (posthog/hogql/constants.py). */
export const DEFAULT_RETURNED_ROWS = 100;
export const MAX_SELECT_RETURNED_ROWS = 50_000;

export interface HogQLStatementOptions {
  /** The ClickHouse database of the tables, already checked as an identifier. */
  database: string;
  teamId: number;
  params: QueryParams;
  /** The values of `{name}` placeholders (PostHog's `values`). */
  values?: Readonly<Record<string, unknown>>;
  /** Rows asked for when the statement says none, and the most it may ask for. */
  defaultLimit?: number;
  maxLimit?: number;
}

export interface CompiledStatement {
  /** Asks for one row more than `limit`: a row past it means `hasMore`. */
  sql: string;
  /** Names of the result columns, as PostHog gives them. */
  columns: string[];
  limit: number;
  offset: number;
}

export interface HogQLStatementCompilerOptions {
  limits?: Partial<HogQLLimits>;
  parser?: HogQLParser;
}

interface OutputColumn {
  name: string;
  type: SqlType;
  nullable: boolean;
  /** A JSON object column (`properties`), whose keys a query reads as `<column>.<key>`. */
  json: boolean;
}

interface CompiledSelect {
  sql: string;
  columns: OutputColumn[];
  /** Each column's name in the SQL (`s0_c1`); a UNION's are its first part's. */
  sqlNames: string[];
}

/** A table of a FROM clause: a HogQL table, or a subquery's columns. */
interface ScopeTable {
  sqlAlias: string;
  table?: HogQLTable;
  columns?: ReadonlyMap<string, { sql: string; column: OutputColumn }>;
}

const SELECT_KEYS = new Set([
  'node',
  'start',
  'end',
  'select',
  'select_from',
  'where',
  'group_by',
  'having',
  'order_by',
  'limit',
  'offset',
  'distinct',
  'limit_by',
]);

const UNSUPPORTED_CLAUSES: Readonly<Record<string, string>> = {
  ctes: 'WITH (common table expressions) is not supported yet',
  prewhere: 'PREWHERE is not supported; use WHERE',
  qualify: 'QUALIFY is not supported',
  window_exprs: 'WINDOW is not supported yet',
  array_join_op: 'ARRAY JOIN is not supported',
  array_join_list: 'ARRAY JOIN is not supported',
  settings: 'SETTINGS cannot be set by a query',
  limit_with_ties: 'LIMIT … WITH TIES is not supported',
  view_name: 'Views are not supported',
};

const JOIN_TYPES: ReadonlyMap<string, string> = new Map([
  ['JOIN', 'INNER JOIN'],
  ['INNER JOIN', 'INNER JOIN'],
  ['LEFT JOIN', 'LEFT JOIN'],
  ['LEFT OUTER JOIN', 'LEFT JOIN'],
  ['RIGHT JOIN', 'RIGHT JOIN'],
  ['RIGHT OUTER JOIN', 'RIGHT JOIN'],
  ['FULL JOIN', 'FULL OUTER JOIN'],
  ['FULL OUTER JOIN', 'FULL OUTER JOIN'],
  ['CROSS JOIN', 'CROSS JOIN'],
]);

const SET_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['UNION ALL', 'UNION ALL'],
  ['UNION DISTINCT', 'UNION DISTINCT'],
]);

/**
 * A HogQL `SELECT` statement (PostHog's HogQLQuery) to parameterised ClickHouse SQL.
 *
 * SECURITY: tables come only from HOGQL_TABLES, each read through its one-project subquery; every
 * name in the SQL text is one this compiler made (`t0`, `s0_c1`) or an allow-listed column or
 * function; every literal and placeholder value is a bound parameter. Clauses that could reach
 * outside the project or change the server's limits (table functions, SETTINGS, FINAL on a user
 * table, system tables) have no way in: anything not on the lists is a HogQLError.
 */
export class HogQLStatementCompiler {
  private readonly limits: HogQLLimits;
  private readonly parser: HogQLParser | undefined;

  constructor(options: HogQLStatementCompilerOptions = {}) {
    this.limits = resolveLimits(options.limits);
    this.parser = options.parser;
  }

  async compile(text: string, options: HogQLStatementOptions): Promise<CompiledStatement> {
    const ast = await this.parse(text);
    return new StatementBuilder(text, options).statement(ast);
  }

  private async parse(text: string): Promise<AstNode> {
    if (typeof text !== 'string' || text.trim() === '') {
      throw new HogQLError('The query is empty', { kind: 'syntax', attr: 'hogql_query' });
    }
    try {
      checkExpressionText(text, this.limits);
      const parsed = await (this.parser ?? sharedHogQLParser()).parseSelect(text, this.limits.parseTimeoutMs);
      if (isAstParseError(parsed)) {
        throw new HogQLError(`Syntax error: ${String(parsed.message)}`, { kind: 'syntax', expression: text });
      }
      if (!isAstNode(parsed)) {
        throw new HogQLError('The query could not be parsed', { kind: 'syntax', expression: text });
      }
      const { depth, nodes } = measureAst(parsed);
      if (depth > this.limits.maxAstDepth || nodes > this.limits.maxAstNodes) {
        throw new HogQLError('The query is too complex', { kind: 'limit', expression: text });
      }
      return parsed;
    } catch (error) {
      throw error instanceof HogQLError ? error.withAttr('hogql_query') : error;
    }
  }
}

class StatementBuilder {
  private readonly placeholders: ReadonlyMap<string, unknown>;
  private readonly teamParam: string;
  private tableCount = 0;
  private selectCount = 0;
  private readonly errors: HogQLPrinter;

  constructor(
    private readonly text: string,
    private readonly options: HogQLStatementOptions,
  ) {
    this.placeholders = new Map(Object.entries(options.values ?? {}));
    this.teamParam = options.params.int(options.teamId);
    this.errors = new HogQLPrinter({ params: options.params, text, allowAggregates: false });
  }

  statement(ast: AstNode): CompiledStatement {
    try {
      const defaultLimit = this.options.defaultLimit ?? DEFAULT_RETURNED_ROWS;
      const maxLimit = this.options.maxLimit ?? MAX_SELECT_RETURNED_ROWS;
      const { limit: asked, offset } = this.topLevelLimit(ast);
      const limit = Math.min(asked ?? defaultLimit, maxLimit);
      const inner = this.query(ast, { topLevel: true });
      const params = this.options.params;
      const paging = `LIMIT ${params.int(limit + 1)}${offset > 0 ? ` OFFSET ${params.int(offset)}` : ''}`;
      return {
        sql: `SELECT * FROM (${inner.sql}) ${paging}`,
        columns: inner.columns.map((column) => column.name),
        limit,
        offset,
      };
    } catch (error) {
      throw error instanceof HogQLError ? error.withAttr('hogql_query') : error;
    }
  }

  /** The top level's LIMIT and OFFSET are applied around it, capped. */
  private topLevelLimit(ast: AstNode): { limit: number | undefined; offset: number } {
    if (ast.node !== 'SelectQuery') return { limit: undefined, offset: 0 };
    const limit = childNode(ast, 'limit');
    const offset = childNode(ast, 'offset');
    return {
      limit: limit ? this.count(limit, 'LIMIT') : undefined,
      offset: offset ? this.count(offset, 'OFFSET') : 0,
    };
  }

  private query(node: AstNode, { topLevel = false } = {}): CompiledSelect {
    if (node.node === 'SelectQuery') return this.select(node, topLevel);
    if (node.node === 'SelectSetQuery') return this.selectSet(node);
    throw this.errors.error('Only SELECT statements are allowed', node);
  }

  private selectSet(node: AstNode): CompiledSelect {
    const first = childNode(node, 'initial_select_query');
    const rest = childNodes(node, 'subsequent_select_queries');
    if (!first || !rest) throw this.errors.error('Malformed query', node, 'syntax');
    const head = this.query(first);
    const parts = [head.sql];
    for (const part of rest) {
      const operator = stringField(part, 'set_operator') ?? '';
      const sqlOperator = SET_OPERATORS.get(operator);
      if (!sqlOperator) throw this.errors.error(`${operator || 'This set operation'} is not supported`, part);
      const query = childNode(part, 'select_query');
      if (!query) throw this.errors.error('Malformed query', part, 'syntax');
      const compiled = this.query(query);
      if (compiled.columns.length !== head.columns.length) {
        throw this.errors.error(
          'Each part of a UNION must select as many columns as the first',
          query,
          'type',
        );
      }
      parts.push(sqlOperator, compiled.sql);
    }
    return { sql: parts.join(' '), columns: head.columns, sqlNames: head.sqlNames };
  }

  private select(node: AstNode, topLevel: boolean): CompiledSelect {
    for (const [key, value] of Object.entries(node)) {
      if (SELECT_KEYS.has(key) || value === null || value === undefined || value === false) continue;
      throw this.errors.error(UNSUPPORTED_CLAUSES[key] ?? `${key} is not supported`, node);
    }
    const index = (this.selectCount += 1) - 1;
    const scope = new SelectScope();
    const from = childNode(node, 'select_from');
    const fromSql = from ? this.from(from, scope) : undefined;

    const items = childNodes(node, 'select');
    if (!items || items.length === 0)
      throw this.errors.error('SELECT needs at least one column', node, 'syntax');
    const columns: OutputColumn[] = [];
    const sqlNames: string[] = [];
    const selectSql: string[] = [];
    for (const item of items) {
      for (const column of this.selectItem(item, scope)) {
        const sqlAlias = `s${index}_c${columns.length}`;
        selectSql.push(`${column.sql} AS ${sqlAlias}`);
        columns.push(column.output);
        sqlNames.push(sqlAlias);
        if (column.alias !== undefined) {
          scope.selectAliases.set(
            column.alias,
            sqlExpr(sqlAlias, column.output.type, {
              aggregate: column.aggregate,
              nullable: column.output.nullable,
            }),
          );
        }
      }
    }

    const clauses = [`SELECT ${node.distinct === true ? 'DISTINCT ' : ''}${selectSql.join(', ')}`];
    if (fromSql) clauses.push(`FROM ${fromSql}`);
    const where = childNode(node, 'where');
    if (where) clauses.push(`WHERE ${this.condition(where, scope, false)}`);
    const groupBy = childNodes(node, 'group_by');
    if (groupBy?.length) {
      clauses.push(`GROUP BY ${groupBy.map((expr) => this.value(expr, scope, false).sql).join(', ')}`);
    }
    const having = childNode(node, 'having');
    if (having) clauses.push(`HAVING ${this.condition(having, scope, true)}`);
    const orderBy = childNodes(node, 'order_by');
    if (orderBy?.length)
      clauses.push(`ORDER BY ${orderBy.map((order) => this.orderExpr(order, scope)).join(', ')}`);
    const limitBy = childNode(node, 'limit_by');
    if (limitBy) clauses.push(this.limitBy(limitBy, scope));
    if (!topLevel) {
      const limit = childNode(node, 'limit');
      const offset = childNode(node, 'offset');
      const params = this.options.params;
      if (limit) clauses.push(`LIMIT ${params.int(this.count(limit, 'LIMIT'))}`);
      if (offset) clauses.push(`OFFSET ${params.int(this.count(offset, 'OFFSET'))}`);
    }
    return { sql: clauses.join(' '), columns, sqlNames };
  }

  private from(join: AstNode, scope: SelectScope): string {
    const parts: string[] = [];
    let current: AstNode | undefined = join;
    let first = true;
    while (current) {
      if (current.node !== 'JoinExpr') throw this.errors.error('Malformed FROM', current, 'syntax');
      if (current.sample) throw this.errors.error('SAMPLE is not supported', current);
      if (current.table_final)
        throw this.errors.error('FINAL is not supported (events are deduplicated already)', current);
      if (current.column_aliases)
        throw this.errors.error('Column aliases on a table are not supported', current);
      const source = this.tableSource(current, scope);
      if (first) {
        parts.push(source);
      } else {
        const joinType = JOIN_TYPES.get(stringField(current, 'join_type') ?? '');
        if (!joinType) {
          throw this.errors.error(
            `${stringField(current, 'join_type') ?? 'This join'} is not supported`,
            current,
          );
        }
        const constraint = childNode(current, 'constraint');
        if (joinType === 'CROSS JOIN') {
          if (constraint) throw this.errors.error('CROSS JOIN takes no ON', current, 'syntax');
          parts.push(`CROSS JOIN ${source}`);
        } else {
          if (!constraint || stringField(constraint, 'constraint_type') !== 'ON') {
            throw this.errors.error(
              `${joinType} needs an ON condition (USING is not supported)`,
              current,
              'syntax',
            );
          }
          const on = childNode(constraint, 'expr');
          if (!on) throw this.errors.error('Malformed ON', constraint, 'syntax');
          parts.push(`${joinType} ${source} ON ${this.condition(on, scope, false)}`);
        }
      }
      first = false;
      current = childNode(current, 'next_join');
    }
    return parts.join(' ');
  }

  /** Adds the join's table to the scope, and answers its SQL. */
  private tableSource(join: AstNode, scope: SelectScope): string {
    const table = childNode(join, 'table');
    if (!table) throw this.errors.error('Malformed FROM', join, 'syntax');
    const alias = stringField(join, 'alias');
    const sqlAlias = `t${(this.tableCount += 1) - 1}`;
    if (table.node === 'Field') {
      const chain = fieldChain(table);
      const name = chain?.length === 1 ? chain[0] : undefined;
      const definition = name === undefined ? undefined : HOGQL_TABLES.get(name);
      if (!definition) {
        throw this.errors.error(
          `Unknown table; the tables are ${[...HOGQL_TABLES.keys()].join(', ')}`,
          table,
          'unsupported',
        );
      }
      scope.addTable(alias ?? definition.name, { sqlAlias, table: definition }, table, this.errors);
      return `(${definition.source(this.options.database, this.teamParam)}) AS ${sqlAlias}`;
    }
    if (table.node === 'SelectQuery' || table.node === 'SelectSetQuery') {
      const subquery = this.query(table);
      const columns = new Map<string, { sql: string; column: OutputColumn }>();
      subquery.columns.forEach((column, index) => {
        if (!columns.has(column.name))
          columns.set(column.name, { sql: `${sqlAlias}.${subquery.sqlNames[index]}`, column });
      });
      scope.addTable(alias ?? '', { sqlAlias, columns }, table, this.errors);
      return `(${subquery.sql}) AS ${sqlAlias}`;
    }
    throw this.errors.error('Table functions are not allowed; select from a table or a subquery', table);
  }

  private selectItem(
    item: AstNode,
    scope: SelectScope,
  ): { sql: string; output: OutputColumn; alias?: string; aggregate: boolean }[] {
    let expression = item;
    let alias: string | undefined;
    if (item.node === 'Alias') {
      alias = stringField(item, 'alias');
      const inner = childNode(item, 'expr');
      if (!inner || alias === undefined) throw this.errors.error('Malformed alias', item, 'syntax');
      if (alias === 'team_id') throw this.errors.error('team_id cannot be used as an alias', item);
      expression = inner;
    }
    const chain = expression.node === 'Field' ? fieldChain(expression) : undefined;
    if (chain && chain[chain.length - 1] === '*') {
      if (alias !== undefined) throw this.errors.error('* cannot have an alias', item, 'syntax');
      return scope
        .star(chain.slice(0, -1), expression, this.errors)
        .map((column) => ({ ...column, aggregate: false }));
    }
    const value = this.value(expression, scope, true);
    const name =
      alias ??
      (chain && !chain.includes('properties') ? chain[chain.length - 1] : this.errors.snippet(expression));
    const json =
      chain !== undefined &&
      (chain[chain.length - 1] === 'properties' || chain[chain.length - 1] === 'person_properties');
    return [
      {
        sql: value.sql,
        output: { name, type: value.type, nullable: value.nullable, json },
        alias,
        aggregate: value.aggregate,
      },
    ];
  }

  private printer(scope: SelectScope, allowAggregates: boolean): HogQLPrinter {
    return new HogQLPrinter({
      params: this.options.params,
      text: this.text,
      allowAggregates,
      fields: scope,
      placeholders: this.placeholders,
      // Its own scope: a subquery sees only its own tables (no correlated subqueries).
      subquery: (node) => {
        const compiled = this.query(node);
        return {
          sql: compiled.sql,
          columns: compiled.columns.map((column, index) => ({
            sql: compiled.sqlNames[index],
            type: column.type,
          })),
        };
      },
    });
  }

  private value(node: AstNode, scope: SelectScope, allowAggregates: boolean): SqlExpr {
    const value = this.printer(scope, allowAggregates).value(node);
    if (!allowAggregates && value.aggregate) {
      throw this.errors.error('Aggregations are not allowed here', node, 'unsupported');
    }
    return value;
  }

  private condition(node: AstNode, scope: SelectScope, allowAggregates: boolean): string {
    const condition = this.printer(scope, allowAggregates).condition(node);
    if (!allowAggregates && condition.aggregate) {
      throw this.errors.error('Aggregations are not allowed here; use HAVING', node, 'unsupported');
    }
    // A condition must be UInt8 (a NULL literal's type is not): NULL counts as false.
    return condition.nullable ? `ifNull(${condition.sql}, 0)` : condition.sql;
  }

  private orderExpr(order: AstNode, scope: SelectScope): string {
    const expr = childNode(order, 'expr');
    if (order.node !== 'OrderExpr' || !expr) throw this.errors.error('Malformed ORDER BY', order, 'syntax');
    const direction = stringField(order, 'order') === 'DESC' ? 'DESC' : 'ASC';
    return `${this.value(expr, scope, true).sql} ${direction}`;
  }

  private limitBy(node: AstNode, scope: SelectScope): string {
    const n = childNode(node, 'n');
    const exprs = childNodes(node, 'exprs');
    if (!n || !exprs?.length) throw this.errors.error('Malformed LIMIT BY', node, 'syntax');
    if (node.offset_value) throw this.errors.error('LIMIT n OFFSET m BY is not supported', node);
    const by = exprs.map((expr) => this.value(expr, scope, false).sql).join(', ');
    return `LIMIT ${this.options.params.int(this.count(n, 'LIMIT BY'))} BY ${by}`;
  }

  /** A LIMIT or OFFSET: a literal non-negative integer, or a placeholder holding one. */
  private count(node: AstNode, clause: string): number {
    let value: unknown;
    if (node.node === 'Placeholder') {
      const inner = childNode(node, 'expr');
      const chain = inner ? fieldChain(inner) : undefined;
      value = chain?.length === 1 ? this.placeholders.get(chain[0]) : undefined;
    } else {
      value = constantValue(node)?.value;
    }
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw this.errors.error(`${clause} takes a non-negative integer`, node, 'value');
    }
    return value;
  }
}

/** The names one SELECT can see: its tables (by alias or name) and its select list's aliases. */
class SelectScope implements FieldResolver {
  readonly tables = new Map<string, ScopeTable>();
  readonly selectAliases = new Map<string, SqlExpr>();
  private readonly anonymous: ScopeTable[] = [];

  addTable(name: string, table: ScopeTable, node: AstNode, errors: HogQLPrinter): void {
    if (name === '') {
      this.anonymous.push(table);
      return;
    }
    if (this.tables.has(name))
      throw errors.error(`The name ${quoteExpression(name)} is used twice in FROM`, node, 'syntax');
    this.tables.set(name, table);
  }

  private allTables(): ScopeTable[] {
    return [...this.tables.values(), ...this.anonymous];
  }

  resolve(chain: readonly string[], node: AstNode, context: FieldContext): SqlExpr {
    const forbidden = forbiddenFieldReason(chain);
    if (forbidden !== undefined) throw context.error(forbidden, node);
    const [head, ...rest] = chain;
    const named = this.tables.get(head);
    if (named && rest.length > 0) {
      const field = fieldOf(named, rest, node, context);
      if (!field) throw context.error('Unknown field', node);
      return field;
    }
    if (named) throw context.error('A table is not a value; name one of its fields', node);
    if (rest.length === 0) {
      const alias = this.selectAliases.get(head);
      if (alias) return alias;
    }
    const found = this.allTables()
      .map((table) => fieldOf(table, chain, node, context))
      .filter((field): field is SqlExpr => field !== undefined);
    if (found.length > 1) throw context.error('Ambiguous field: qualify it with its table', node);
    if (found.length === 0) throw context.error('Unknown field', node);
    return found[0];
  }

  /** `*` or `t.*`: each column of the table(s), named as the table names it. */
  star(
    qualifier: readonly string[],
    node: AstNode,
    errors: HogQLPrinter,
  ): { sql: string; output: OutputColumn }[] {
    let tables: ScopeTable[];
    if (qualifier.length === 0) {
      tables = this.allTables();
      if (tables.length === 0) throw errors.error('* needs a FROM', node, 'syntax');
    } else {
      const table = qualifier.length === 1 ? this.tables.get(qualifier[0]) : undefined;
      if (!table) throw errors.error('Unknown table', node);
      tables = [table];
    }
    const columns: { sql: string; output: OutputColumn }[] = [];
    for (const table of tables) {
      if (table.table) {
        for (const name of table.table.star) {
          const field = table.table.field(table.sqlAlias, [name], node, errors)!;
          columns.push({
            sql: field.sql,
            output: { name, type: field.type, nullable: field.nullable, json: name === 'properties' },
          });
        }
      } else {
        for (const [, { sql, column }] of table.columns ?? []) columns.push({ sql, output: column });
      }
    }
    return columns;
  }
}

function fieldOf(
  table: ScopeTable,
  chain: readonly string[],
  node: AstNode,
  context: FieldContext,
): SqlExpr | undefined {
  if (table.table) return table.table.field(table.sqlAlias, chain, node, context);
  const [head, ...rest] = chain;
  const column = table.columns?.get(head);
  if (!column) return undefined;
  if (rest.length === 0) return sqlExpr(column.sql, column.column.type, { nullable: column.column.nullable });
  if (column.column.json) return context.property(column.sql, rest, node);
  return undefined;
}
