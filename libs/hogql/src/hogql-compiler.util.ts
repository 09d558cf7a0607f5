import {
  childNode,
  fieldChain,
  isAstNode,
  isAstParseError,
  measureAst,
  stringField,
  type AstNode,
} from './hogql-ast.util';
import { HogQLError, quoteExpression, type HogQLErrorAttr } from './hogql.errors';
import { personTupleSql, STAR_FIELDS } from './hogql-fields.util';
import { checkExpressionText, resolveLimits, type HogQLLimits } from './hogql-limits.util';
import { sharedHogQLParser, type HogQLParser } from './hogql-parser.util';
import { HogQLPrinter } from './hogql-printer.util';
import type { QueryParams } from './query-params.util';

export interface CompiledColumn {
  /** As written: the column name PostHog returns. */
  label: string;
  alias: string | null;
  sql: string;
  /**
   * Select under this (`c0`, …), never the user's alias: a SELECT alias shadows a same-named
   * column in WHERE, so `lower(event) AS event` would change the listing's own filter.
   */
  columnAlias: string;
  /** `star` and `person` come back as ClickHouse tuples for the caller to reshape. */
  kind: 'expression' | 'star' | 'person';
  isAggregation: boolean;
}

export interface CompiledSelect {
  columns: CompiledColumn[];
  hasAggregation: boolean;
  /** The non-aggregate columns' SQL when `hasAggregation`, else empty. */
  groupBy: string[];
}

export interface CompiledWhere {
  /** UInt8 expressions, safe in WHERE. */
  conditions: string[];
  sql: string | null;
}

export interface HogQLCompilerOptions {
  limits?: Partial<HogQLLimits>;
  /** Defaults to the process-wide parser worker. */
  parser?: HogQLParser;
}

/**
 * The event listing's `select` and `where` to parameterised SQL, as PostHog's listing reads them:
 * `select: []` is `["*"]`, an aggregate makes the others the GROUP BY; aggregates in `where` are refused.
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

  /** A `hogql` property filter. */
  async compileCondition(text: string, params: QueryParams, attr: HogQLErrorAttr): Promise<string> {
    const [{ ast }] = await this.parseAll(this.checkList([text], attr), attr);
    return withAttr(attr, () => compileCondition(text, ast, params));
  }

  /** An expression of a whole parsed query; `text` is what the node's positions point into. */
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

export function compileHogQLSelect(
  expressions: readonly unknown[],
  params: QueryParams,
): Promise<CompiledSelect> {
  return defaultCompiler().compileSelect(expressions, params);
}

export function compileHogQLWhere(
  expressions: readonly unknown[],
  params: QueryParams,
): Promise<CompiledWhere> {
  return defaultCompiler().compileWhere(expressions, params);
}

/** A JSON array of strings, as PostHog json.loads it. */
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
