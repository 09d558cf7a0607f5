import {
  childNode,
  fieldChain,
  isAstNode,
  isAstParseError,
  measureAst,
  stringField,
  type AstNode,
} from './hogql-ast';
import { HogQLError, quoteExpression, type HogQLErrorAttr } from './hogql-error';
import { personTupleSql, STAR_FIELDS } from './hogql-fields';
import { checkExpressionText, resolveLimits, type HogQLLimits } from './hogql-limits';
import { sharedHogQLParser, type HogQLParser } from './hogql-parser';
import { HogQLPrinter } from './hogql-printer';
import type { QueryParams } from './query-params';

/** One compiled `select` column. */
export interface CompiledColumn {
  /** The expression exactly as the user wrote it: the column name PostHog returns. */
  label: string;
  /** The name after a top-level `AS`, if any. */
  alias: string | null;
  /** The ClickHouse expression (no `AS`). */
  sql: string;
  /**
   * An alias to select it under (`c0`, `c1`, …). Use it rather than the user's alias: ClickHouse
   * lets a SELECT alias shadow a column of the same name in WHERE, so `lower(event) AS event`
   * would change what the listing's own `event = …` filter means.
   */
  columnAlias: string;
  /**
   * `star` is `*`, a tuple of STAR_FIELDS (team_id left out); `person` is `person`, a tuple of
   * PERSON_TUPLE_FIELDS. Both come back as ClickHouse tuples for the caller to reshape.
   */
  kind: 'expression' | 'star' | 'person';
  isAggregation: boolean;
}

export interface CompiledSelect {
  columns: CompiledColumn[];
  /** At least one column aggregates; then the others form `groupBy`, as PostHog did. */
  hasAggregation: boolean;
  /** The non-aggregate columns' SQL when `hasAggregation`, else empty. */
  groupBy: string[];
}

export interface CompiledWhere {
  /** One condition per expression, each a UInt8 expression safe in WHERE. */
  conditions: string[];
  /** All conditions and-ed, or null when there are none. */
  sql: string | null;
}

export interface HogQLCompilerOptions {
  limits?: Partial<HogQLLimits>;
  /** Defaults to the process-wide parser worker. */
  parser?: HogQLParser;
}

/**
 * Compiles the event listing's `select` and `where` parameters (JSON arrays of HogQL expressions)
 * to parameterised ClickHouse SQL over the events table. Values bind into the given QueryParams;
 * errors are HogQLErrors with `attr` set to `select` or `where`.
 *
 * Follows PostHog's 2022–23 experimental listing: `select: []` means `["*"]`; when a select
 * column aggregates, the other columns are the GROUP BY. Unlike it, aggregates in `where` are
 * refused (it moved them to HAVING).
 */
export class HogQLCompiler {
  private readonly limits: HogQLLimits;
  private readonly parser: HogQLParser | undefined;

  constructor(options: HogQLCompilerOptions = {}) {
    this.limits = resolveLimits(options.limits);
    this.parser = options.parser;
  }

  async compileSelect(expressions: readonly unknown[], params: QueryParams): Promise<CompiledSelect> {
    const texts = this.checkList(expressions.length === 0 ? ['*'] : expressions, 'select');
    const asts = await this.parseAll(texts, 'select');
    const columns = asts.map(({ text, ast }, index) =>
      withAttr('select', () => this.selectColumn(text, ast, index, params)),
    );
    const hasAggregation = columns.some((column) => column.isAggregation);
    const groupBy = hasAggregation
      ? columns.filter((column) => !column.isAggregation).map((column) => column.sql)
      : [];
    return { columns, hasAggregation, groupBy };
  }

  async compileWhere(expressions: readonly unknown[], params: QueryParams): Promise<CompiledWhere> {
    const texts = this.checkList(expressions, 'where');
    const asts = await this.parseAll(texts, 'where');
    const conditions = asts.map(({ text, ast }) =>
      withAttr('where', () => compileCondition(text, ast, params)),
    );
    return { conditions, sql: andAll(conditions) };
  }

  /**
   * One HogQL boolean expression (a `hogql` property filter), errors tagged with `attr`.
   */
  async compileCondition(text: string, params: QueryParams, attr: HogQLErrorAttr): Promise<string> {
    const [{ ast }] = await this.parseAll(this.checkList([text], attr), attr);
    return withAttr(attr, () => compileCondition(text, ast, params));
  }

  /**
   * One select expression parsed as part of a whole query (`HogQLParser.parseSelect`), compiled
   * exactly as compileSelect compiles each of its expressions. `text` is the text the node's
   * positions point into (the whole query), for error messages. Errors carry no attr.
   */
  compileParsedSelect(text: string, ast: AstNode, index: number, params: QueryParams): CompiledColumn {
    return this.selectColumn(text, ast, index, params);
  }

  private checkList(expressions: readonly unknown[], attr: HogQLErrorAttr): string[] {
    if (expressions.length > this.limits.maxExpressions) {
      throw new HogQLError(`At most ${this.limits.maxExpressions} expressions are allowed in ${attr}`, {
        kind: 'limit',
        attr,
      });
    }
    return expressions.map((expression) => {
      if (typeof expression !== 'string') {
        throw new HogQLError(`Each ${attr} expression must be a string, got ${JSON.stringify(expression)}`, {
          kind: 'syntax',
          attr,
        });
      }
      withAttr(attr, () => checkExpressionText(expression, this.limits));
      return expression;
    });
  }

  private async parseAll(
    texts: readonly string[],
    attr: HogQLErrorAttr,
  ): Promise<{ text: string; ast: AstNode }[]> {
    const parser = this.parser ?? sharedHogQLParser();
    const deadline = Date.now() + this.limits.totalParseTimeoutMs;
    const results: { text: string; ast: AstNode }[] = [];
    for (const text of texts) {
      const timeout = Math.min(this.limits.parseTimeoutMs, deadline - Date.now());
      let parsed: unknown;
      try {
        parsed = await parser.parseExpr(text, timeout);
      } catch (error) {
        throw error instanceof HogQLError ? error.withAttr(attr) : error;
      }
      results.push({ text, ast: withAttr(attr, () => this.checkParsed(text, parsed)) });
    }
    return results;
  }

  private checkParsed(text: string, parsed: unknown): AstNode {
    if (isAstParseError(parsed)) {
      throw new HogQLError(`Syntax error in ${quoteExpression(text)}: ${String(parsed.message)}`, {
        kind: 'syntax',
        expression: text,
      });
    }
    if (!isAstNode(parsed)) {
      throw new HogQLError(`Expression ${quoteExpression(text)} could not be parsed`, {
        kind: 'syntax',
        expression: text,
      });
    }
    const { depth, nodes } = measureAst(parsed);
    if (depth > this.limits.maxAstDepth || nodes > this.limits.maxAstNodes) {
      throw new HogQLError(`Expression ${quoteExpression(text)} is too complex`, {
        kind: 'limit',
        expression: text,
      });
    }
    return parsed;
  }

  private selectColumn(text: string, ast: AstNode, index: number, params: QueryParams): CompiledColumn {
    let expression = ast;
    let alias: string | null = null;
    if (ast.node === 'Alias') {
      const inner = childNode(ast, 'expr');
      alias = stringField(ast, 'alias') ?? null;
      if (!inner || alias === null) {
        throw new HogQLError(`Malformed alias in ${quoteExpression(text)}`, {
          kind: 'syntax',
          expression: text,
        });
      }
      expression = inner;
    }
    const base = { label: text, alias, columnAlias: `c${index}` };
    const chain = expression.node === 'Field' ? fieldChain(expression) : undefined;
    if (chain?.length === 1 && chain[0] === '*') {
      return { ...base, kind: 'star', sql: `tuple(${STAR_FIELDS.join(', ')})`, isAggregation: false };
    }
    if (chain?.length === 1 && chain[0] === 'person') {
      return { ...base, kind: 'person', sql: personTupleSql(params), isAggregation: false };
    }
    const printer = new HogQLPrinter({ params, text, allowAggregates: true });
    const value = printer.value(expression);
    return { ...base, kind: 'expression', sql: value.sql, isAggregation: value.aggregate };
  }
}

function compileCondition(text: string, ast: AstNode, params: QueryParams): string {
  const printer = new HogQLPrinter({ params, text, allowAggregates: false });
  const condition = printer.condition(ast);
  // A WHERE condition must be UInt8 (a NULL literal's type is not): NULL counts as false.
  return condition.nullable ? `ifNull(${condition.sql}, 0)` : condition.sql;
}

function andAll(conditions: readonly string[]): string | null {
  if (conditions.length === 0) return null;
  if (conditions.length === 1) return conditions[0];
  return `and(${conditions.join(', ')})`;
}

function withAttr<T>(attr: HogQLErrorAttr, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw error instanceof HogQLError ? error.withAttr(attr) : error;
  }
}

let sharedCompiler: HogQLCompiler | undefined;

function defaultCompiler(): HogQLCompiler {
  sharedCompiler ??= new HogQLCompiler();
  return sharedCompiler;
}

/** `select` with the default limits and the shared parser. */
export function compileHogQLSelect(
  expressions: readonly unknown[],
  params: QueryParams,
): Promise<CompiledSelect> {
  return defaultCompiler().compileSelect(expressions, params);
}

/** `where` with the default limits and the shared parser. */
export function compileHogQLWhere(
  expressions: readonly unknown[],
  params: QueryParams,
): Promise<CompiledWhere> {
  return defaultCompiler().compileWhere(expressions, params);
}

/**
 * Reads a `select` or `where` query parameter: a JSON array of strings (PostHog json.loads it).
 * Undefined or empty input gives undefined.
 */
export function parseExpressionListParam(
  raw: string | undefined,
  attr: 'select' | 'where',
): string[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new HogQLError(`${attr} must be a JSON array of HogQL expressions`, { kind: 'syntax', attr });
  }
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
    throw new HogQLError(`${attr} must be a JSON array of HogQL expressions`, { kind: 'syntax', attr });
  }
  return parsed;
}
