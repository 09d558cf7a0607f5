import {
  childNode,
  childNodes,
  constantValue,
  fieldChain,
  stringField,
  type AstNode,
} from './hogql-ast.util';
import {
  compileComparison,
  compileInList,
  dateTimeLiteral,
  likePatternError,
} from './hogql-comparisons.util';
import { HogQLError, quoteExpression, type HogQLErrorKind } from './hogql.errors';
import {
  EVENT_LISTING_FIELDS,
  MAX_PROPERTY_PATH,
  propertyExpr,
  type FieldResolver,
} from './hogql-fields.util';
import { findHogQLFunction } from './hogql-functions.util';
import {
  anyNullable,
  coerceTo,
  commonSqlType,
  isNumberLike,
  isStringLike,
  isTemporal,
  sqlExpr,
  TYPE_NAMES,
  type ArithmeticOperator,
  type CompareOperator,
  type ExpressionCompiler,
  type PatternOperator,
  type SqlExpr,
  type SqlType,
} from './hogql-sql.util';
import { MAX_REGEX_LENGTH, re2SyntaxError } from './re2-syntax.util';
import type { QueryParams } from './query-params.util';

export interface HogQLPrinterOptions {
  params: QueryParams;
  text: string;
  allowAggregates: boolean;
  /** What a field names; the event listing's columns by default. */
  fields?: FieldResolver;
  /** The values of `{name}` placeholders; without them a placeholder is refused. */
  placeholders?: ReadonlyMap<string, unknown>;
  /** Compiles the subquery of `x IN (SELECT …)`; without it such a subquery is refused. */
  subquery?: (node: AstNode) => { sql: string; columns: { sql: string; type: SqlType }[] };
}

const ARITHMETIC_FUNCTIONS: Readonly<Record<ArithmeticOperator, string>> = {
  '+': 'plus',
  '-': 'minus',
  '*': 'multiply',
  '/': 'divide',
  // NOTE: modulo by zero is an error in ClickHouse; moduloOrZero answers 0 instead.
  '%': 'moduloOrZero',
};

const UNSUPPORTED_NODES: Readonly<Record<string, string>> = {
  SelectQuery: 'Subqueries are not allowed',
  SelectSetQuery: 'Subqueries are not allowed',
  Placeholder: 'Placeholders are not allowed',
  Lambda: 'Lambdas are not allowed',
  WindowFunction: 'Window functions are not allowed',
  ExprCall: 'Calling an expression is not allowed',
  TypeCast: 'Type casts (::) are not allowed; use toInt(), toFloat(), toString(), toDateTime()',
  TupleAccess: 'Tuple access is not allowed',
  Dict: 'Dictionaries are not allowed',
  ColumnsExpr: 'COLUMNS() is not allowed',
  IsDistinctFrom: 'IS DISTINCT FROM is not supported; use = and IS NULL',
  Tuple: 'Tuples are only allowed as the list of IN',
  Array: 'Arrays are only allowed as the list of IN',
  Alias: 'Aliases (AS) are only allowed around a whole select expression',
};

/**
 * SECURITY: every literal becomes a bound parameter; identifiers and function names come only from
 * the allow-lists of hogql-fields.util.ts and hogql-functions.util.ts.
 */
export class HogQLPrinter implements ExpressionCompiler {
  readonly params: QueryParams;
  private readonly text: string;
  private readonly codePoints: string[];
  private readonly allowAggregates: boolean;
  private readonly fields: FieldResolver;
  private readonly placeholders: ReadonlyMap<string, unknown> | undefined;
  private readonly subquery: HogQLPrinterOptions['subquery'];
  private aggregateName: string | undefined;

  constructor(options: HogQLPrinterOptions) {
    this.params = options.params;
    this.text = options.text;
    this.codePoints = Array.from(options.text);
    this.allowAggregates = options.allowAggregates;
    this.fields = options.fields ?? EVENT_LISTING_FIELDS;
    this.placeholders = options.placeholders;
    this.subquery = options.subquery;
  }

  value(node: AstNode): SqlExpr {
    switch (node.node) {
      case 'Constant':
        return this.literal(node);
      case 'Placeholder':
        if (this.placeholders) return this.placeholder(node);
        throw this.unsupported(node);
      case 'Field':
      case 'ArrayAccess':
        return this.field(node);
      case 'Call':
        return this.call(node);
      case 'CompareOperation':
        return this.compareOperation(node);
      case 'And':
      case 'Or':
        return this.logical(node);
      case 'Not': {
        const inner = this.condition(this.child(node, 'expr'));
        return sqlExpr(`not(${inner.sql})`, 'bool', {
          nullable: inner.nullable,
          aggregate: inner.aggregate,
        });
      }
      case 'ArithmeticOperation':
        return this.arithmeticOperation(node);
      case 'BetweenExpr':
        return this.between(node);
      default:
        throw this.unsupported(node);
    }
  }

  private unsupported(node: AstNode): HogQLError {
    const reason = Object.hasOwn(UNSUPPORTED_NODES, node.node)
      ? UNSUPPORTED_NODES[node.node]
      : 'This kind of expression is not supported';
    return this.error(reason, node, 'unsupported');
  }

  condition(node: AstNode): SqlExpr {
    const value = this.value(node);
    switch (value.type) {
      case 'bool':
        return value;
      case 'null':
        return sqlExpr('NULL', 'bool', { nullable: true, literal: true });
      case 'number':
        return sqlExpr(`notEquals(${value.sql}, 0)`, 'bool', {
          nullable: value.nullable,
          aggregate: value.aggregate,
        });
      default:
        throw this.error(
          `${capitalize(TYPE_NAMES[value.type])} is not a condition; compare it with something`,
          node,
          'type',
        );
    }
  }

  stringArgument(node: AstNode, functionName: string): SqlExpr {
    const value = this.value(node);
    if (isStringLike(value.type) || value.type === 'null') return value;
    throw this.error(
      `${functionName}() takes a string, not ${TYPE_NAMES[value.type]} (convert it with toString())`,
      node,
      'type',
    );
  }

  numberArgument(node: AstNode, functionName: string): SqlExpr {
    const value = this.value(node);
    if (isNumberLike(value.type) || value.type === 'null') return value;
    if (value.type === 'property') return coerceTo(value, 'number');
    throw this.error(
      `${functionName}() takes a number, not ${TYPE_NAMES[value.type]}` +
        (value.type === 'string' ? ' (convert it with toFloat())' : ''),
      node,
      'type',
    );
  }

  dateTimeArgument(node: AstNode, functionName: string): SqlExpr {
    const literal = constantValue(node);
    if (literal && typeof literal.value === 'string') {
      return dateTimeLiteral(this, literal.value, node);
    }
    const value = this.value(node);
    if (isTemporal(value.type) || value.type === 'null') return value;
    if (isStringLike(value.type)) return coerceTo(value, 'datetime');
    throw this.error(
      `${functionName}() takes a date or date-time, not ${TYPE_NAMES[value.type]}`,
      node,
      'type',
    );
  }

  integerLiteral(node: AstNode, functionName: string): { sql: string; value: number } {
    const literal = constantValue(node);
    if (!literal || typeof literal.value !== 'number' || !Number.isSafeInteger(literal.value)) {
      throw this.error(`${callLabel(functionName)} takes a literal integer here`, node, 'type');
    }
    return { sql: this.params.int(literal.value), value: literal.value };
  }

  stringLiteral(node: AstNode, functionName: string): string {
    const literal = constantValue(node);
    if (!literal || typeof literal.value !== 'string' || literal.numberText) {
      throw this.error(`${callLabel(functionName)} takes a literal string here`, node, 'type');
    }
    return literal.value;
  }

  regexLiteral(node: AstNode, functionName: string, prefix = ''): string {
    const pattern = this.stringLiteral(node, functionName);
    if (Array.from(pattern).length > MAX_REGEX_LENGTH) {
      throw this.error(`Regular expression longer than ${MAX_REGEX_LENGTH} characters`, node, 'limit');
    }
    const problem = re2SyntaxError(prefix + pattern);
    if (problem !== undefined) {
      throw this.error(`Invalid regular expression ${quoteExpression(pattern)} (${problem})`, node, 'value');
    }
    return this.params.string(prefix + pattern);
  }

  likeLiteral(node: AstNode, functionName: string): string {
    const pattern = this.stringLiteral(node, functionName);
    const problem = likePatternError(pattern);
    if (problem !== undefined) {
      throw this.error(`Invalid LIKE pattern ${quoteExpression(pattern)} (${problem})`, node, 'value');
    }
    return this.params.string(pattern);
  }

  compare(
    operator: CompareOperator | PatternOperator,
    left: AstNode,
    right: AstNode,
    node: AstNode,
  ): SqlExpr {
    return compileComparison(this, operator, left, right, node);
  }

  arithmetic(operator: ArithmeticOperator, left: AstNode, right: AstNode, node: AstNode): SqlExpr {
    const leftValue = this.value(left);
    const rightValue = this.value(right);
    const fn = ARITHMETIC_FUNCTIONS[operator];
    const aggregate = leftValue.aggregate || rightValue.aggregate;
    const nullable = leftValue.nullable || rightValue.nullable;
    if (operator === '+' || operator === '-') {
      if (isTemporal(leftValue.type) && rightValue.type === 'interval') {
        return sqlExpr(`${fn}(${leftValue.sql}, ${rightValue.sql})`, leftValue.type, { nullable, aggregate });
      }
      if (operator === '+' && leftValue.type === 'interval' && isTemporal(rightValue.type)) {
        return sqlExpr(`plus(${rightValue.sql}, ${leftValue.sql})`, rightValue.type, { nullable, aggregate });
      }
    }
    const operands = [leftValue, rightValue].map((value, index) => {
      if (isNumberLike(value.type) || value.type === 'null') return value;
      if (value.type === 'property') return coerceTo(value, 'number');
      const side = index === 0 ? left : right;
      if (isTemporal(value.type) || value.type === 'interval') {
        throw this.error(
          `Cannot apply ${operator} to ${TYPE_NAMES[leftValue.type]} and ${TYPE_NAMES[rightValue.type]}` +
            (isTemporal(value.type) ? ' (use dateDiff(), dateAdd() or an INTERVAL)' : ''),
          node,
          'type',
        );
      }
      throw this.error(
        `Cannot apply ${operator} to ${TYPE_NAMES[value.type]}` +
          (value.type === 'string' ? ' (convert it with toFloat())' : ''),
        side,
        'type',
      );
    });
    return sqlExpr(`${fn}(${operands[0].sql}, ${operands[1].sql})`, 'number', {
      nullable: anyNullable(operands),
      aggregate,
    });
  }

  commonType(parts: readonly SqlExpr[], what: string, node: AstNode): SqlType {
    const common = commonSqlType(parts.map((part) => part.type));
    if (common !== undefined) return common;
    const types = new Set(parts.map((part) => part.type).filter((type) => type !== 'null'));
    const names = [...types].map((type) => TYPE_NAMES[type]).join(' and ');
    throw this.error(`Cannot combine ${names} in ${what}`, node, 'type');
  }

  insideAggregate<T>(functionName: string, node: AstNode, compile: () => T): T {
    if (this.aggregateName !== undefined) {
      throw this.error(
        `Aggregation ${functionName}() cannot be nested inside ${this.aggregateName}()`,
        node,
        'unsupported',
      );
    }
    this.aggregateName = functionName;
    try {
      return compile();
    } finally {
      this.aggregateName = undefined;
    }
  }

  error(message: string, node: AstNode, kind: HogQLErrorKind = 'unsupported'): HogQLError {
    const snippet = this.snippet(node);
    const context = snippet === this.text.trim() ? '' : ` in ${quoteExpression(this.text)}`;
    return new HogQLError(`${message}: ${quoteExpression(snippet)}${context}`, {
      kind,
      expression: snippet,
    });
  }

  /** The parser gives code-point offsets. */
  snippet(node: AstNode): string {
    const start = node.start?.offset;
    const end = node.end?.offset;
    if (typeof start !== 'number' || typeof end !== 'number' || end <= start) return this.text.trim();
    return this.codePoints.slice(start, end).join('');
  }

  private child(node: AstNode, key: string): AstNode {
    const child = childNode(node, key);
    if (!child) throw this.error('Malformed expression', node, 'syntax');
    return child;
  }

  private children(node: AstNode, key: string): AstNode[] {
    const children = childNodes(node, key);
    if (!children) throw this.error('Malformed expression', node, 'syntax');
    return children;
  }

  private literal(node: AstNode): SqlExpr {
    const literal = constantValue(node);
    if (!literal) throw this.error('Unsupported literal', node);
    const { value } = literal;
    if (literal.numberText) {
      throw this.error('Number out of range (literals must be finite 64-bit numbers)', node, 'value');
    }
    if (value === null) return sqlExpr('NULL', 'null', { nullable: true, literal: true });
    if (typeof value === 'boolean') return sqlExpr(value ? 'true' : 'false', 'bool', { literal: true });
    if (typeof value === 'string') return sqlExpr(this.params.string(value), 'string', { literal: true });
    // The JSON number lost how it was written (`2.0` arrives as 2); the source tells an integer
    // from a float. Nodes the parser made up (the 0 of `-x`) have no source.
    const source = node.start && node.end ? this.snippet(node) : String(value);
    const float = !/^[+-]?\s*0x/i.test(source) && /[.eE]/.test(source);
    if (!float) {
      if (!Number.isSafeInteger(value)) {
        throw this.error('Integer out of range (at most 2^53 - 1 in magnitude)', node, 'value');
      }
      return sqlExpr(this.params.int(value), 'number', { literal: true });
    }
    if (!Number.isFinite(value)) throw this.error('Number out of range', node, 'value');
    return sqlExpr(this.params.float(value), 'number', { literal: true });
  }

  private field(node: AstNode): SqlExpr {
    const chain = this.chainOf(node);
    if (!chain) {
      throw this.error("Only properties can be indexed, with a literal key: properties['key']", node);
    }
    if (chain.includes('*')) {
      throw this.error('* is only allowed on its own as a select expression, or in count(*)', node);
    }
    return this.fields.resolve(chain, node, this);
  }

  /** A JSON property of `column` (its SQL), as text. */
  property(column: string, path: readonly string[], node: AstNode): SqlExpr {
    if (path.length > MAX_PROPERTY_PATH) {
      throw this.error(`Property paths are at most ${MAX_PROPERTY_PATH} keys deep`, node, 'limit');
    }
    return propertyExpr(column, path, this.params);
  }

  /** `{name}`: its value as a bound literal, typed by its JSON type. */
  private placeholder(node: AstNode): SqlExpr {
    const inner = childNode(node, 'expr');
    const chain = inner?.node === 'Field' ? fieldChain(inner) : undefined;
    const name = chain?.length === 1 ? chain[0] : undefined;
    if (name === undefined) throw this.error('A placeholder is a single name: {name}', node, 'syntax');
    if (!this.placeholders?.has(name)) {
      throw this.error(`Placeholder {${name}} has no value in "values"`, node, 'value');
    }
    const value = this.placeholders.get(name);
    if (value === null) return sqlExpr('NULL', 'null', { nullable: true, literal: true });
    if (typeof value === 'boolean') return sqlExpr(value ? 'true' : 'false', 'bool', { literal: true });
    if (typeof value === 'string') return sqlExpr(this.params.string(value), 'string', { literal: true });
    if (typeof value === 'number' && Number.isSafeInteger(value)) {
      return sqlExpr(this.params.int(value), 'number', { literal: true });
    }
    if (typeof value === 'number' && Number.isFinite(value)) {
      return sqlExpr(this.params.float(value), 'number', { literal: true });
    }
    throw this.error(
      `Placeholder {${name}} must be a string, a finite number, a boolean or null`,
      node,
      'value',
    );
  }

  private chainOf(node: AstNode): string[] | undefined {
    if (node.node === 'Field') return fieldChain(node);
    if (node.node !== 'ArrayAccess') return undefined;
    const base = childNode(node, 'array');
    const key = childNode(node, 'property');
    const keyValue = key ? constantValue(key) : undefined;
    if (!base || !keyValue || typeof keyValue.value !== 'string') return undefined;
    const baseChain = this.chainOf(base);
    return baseChain ? [...baseChain, keyValue.value] : undefined;
  }

  private call(node: AstNode): SqlExpr {
    const name = stringField(node, 'name');
    const args = this.children(node, 'args');
    if (name === undefined) throw this.error('Malformed function call', node, 'syntax');
    if (node.params !== undefined && node.params !== null) {
      throw this.error('Parametric functions like quantile(0.5)(x) are not supported', node);
    }
    if (node.filter_expr !== undefined && node.filter_expr !== null) {
      throw this.error('FILTER (WHERE …) is not supported; use countIf() or if()', node);
    }
    if (node.order_by !== undefined && node.order_by !== null) {
      throw this.error('ORDER BY inside a function call is not supported', node);
    }
    const spec = findHogQLFunction(name);
    if (!spec) throw this.error(`Unknown or disallowed function ${name}()`, node);
    if (args.length < spec.minArgs || args.length > spec.maxArgs) {
      const expected =
        spec.minArgs === spec.maxArgs
          ? `${spec.minArgs}`
          : spec.maxArgs >= 100
            ? `at least ${spec.minArgs}`
            : `${spec.minArgs} to ${spec.maxArgs}`;
      throw this.error(
        `${spec.name}() takes ${expected} argument${expected === '1' ? '' : 's'}, not ${args.length}`,
        node,
        'syntax',
      );
    }
    const distinct = node.distinct === true;
    if (distinct && !spec.allowsDistinct) {
      throw this.error(`DISTINCT is only supported in count(DISTINCT …)`, node);
    }
    if (spec.aggregate && !this.allowAggregates) {
      throw this.error(`Aggregations like ${spec.name}() are only allowed in select`, node);
    }
    return spec.compile(args, this, { name, node, distinct });
  }

  private compareOperation(node: AstNode): SqlExpr {
    const operator = stringField(node, 'op');
    const left = this.child(node, 'left');
    const right = this.child(node, 'right');
    switch (operator) {
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=':
      case 'like':
      case 'ilike':
      case 'not like':
      case 'not ilike':
      case '=~':
      case '!~':
      case '=~*':
      case '!~*':
        return this.compare(operator, left, right, node);
      case 'in':
      case 'not in':
        if (this.subquery && (right.node === 'SelectQuery' || right.node === 'SelectSetQuery')) {
          return this.inSubquery(operator, left, right, node);
        }
        return compileInList(this, operator, left, right, node);
      case 'in cohort':
      case 'not in cohort':
        throw this.error('Cohorts are not supported', node);
      default:
        throw this.error(`Operator ${operator ?? '?'} is not supported`, node);
    }
  }

  /** `x IN (SELECT y …)`: one column, of a type `x` compares with; NULL is in nothing. */
  private inSubquery(operator: 'in' | 'not in', left: AstNode, right: AstNode, node: AstNode): SqlExpr {
    const value = this.value(left);
    const subquery = this.subquery!(right);
    if (subquery.columns.length !== 1) {
      throw this.error('A subquery after IN selects exactly one column', right, 'type');
    }
    const [column] = subquery.columns;
    const type = this.commonType([value, sqlExpr('NULL', column.type)], 'IN', node);
    if (type === 'interval') throw this.error('Intervals cannot be compared', node, 'type');
    const subject = coerceTo(value, type);
    const values =
      column.type === type
        ? subquery.sql
        : `SELECT ${coerceTo(sqlExpr(`in_subquery.${column.sql}`, column.type, { nullable: true }), type).sql} FROM (${subquery.sql}) AS in_subquery`;
    const fn = operator === 'in' ? 'in' : 'notIn';
    let sql = `${fn}(${subject.sql}, (${values}))`;
    if (subject.nullable) sql = `ifNull(${sql}, ${operator === 'in' ? 0 : 1})`;
    return sqlExpr(sql, 'bool', { aggregate: subject.aggregate });
  }

  private logical(node: AstNode): SqlExpr {
    const parts = this.children(node, 'exprs').map((child) => this.condition(child));
    if (parts.length === 0) throw this.error('Malformed expression', node, 'syntax');
    if (parts.length === 1) return parts[0];
    const fn = node.node === 'And' ? 'and' : 'or';
    return sqlExpr(`${fn}(${parts.map((part) => part.sql).join(', ')})`, 'bool', {
      nullable: anyNullable(parts),
      aggregate: parts.some((part) => part.aggregate),
    });
  }

  private arithmeticOperation(node: AstNode): SqlExpr {
    const operator = stringField(node, 'op');
    if (operator === undefined || !Object.hasOwn(ARITHMETIC_FUNCTIONS, operator)) {
      throw this.error(`Operator ${operator ?? '?'} is not supported`, node);
    }
    return this.arithmetic(
      operator as ArithmeticOperator,
      this.child(node, 'left'),
      this.child(node, 'right'),
      node,
    );
  }

  private between(node: AstNode): SqlExpr {
    const subject = this.child(node, 'expr');
    const low = this.compare('>=', subject, this.child(node, 'low'), node);
    const high = this.compare('<=', subject, this.child(node, 'high'), node);
    const sql = `and(${low.sql}, ${high.sql})`;
    const aggregate = low.aggregate || high.aggregate;
    if (node.negated === true) return sqlExpr(`not(${sql})`, 'bool', { aggregate });
    return sqlExpr(sql, 'bool', { aggregate });
  }
}

/** `lower()` for a function, `LIKE` or `=~` for an operator. */
function callLabel(name: string): string {
  return /^[a-z_][A-Za-z0-9_]*$/.test(name) || /^JSON/.test(name) ? `${name}()` : name;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
