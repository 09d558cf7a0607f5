import { childNodes, constantValue, type AstNode } from './hogql-ast.util';
import { formatClickHouseDate, formatClickHouseDateTime, parseAbsoluteDate } from './date-value.util';
import {
  coerceTo,
  isStringLike,
  sqlExpr,
  type CompareOperator,
  type ExpressionCompiler,
  type PatternOperator,
  type SqlExpr,
  type SqlType,
} from './hogql-sql.util';

/** Both sides brought to one type, literals checked against it, and PostHog's NULL rules applied. */
const COMPARE_FUNCTIONS: Readonly<Record<CompareOperator, string>> = {
  '==': 'equals',
  '!=': 'notEquals',
  '<': 'less',
  '<=': 'lessOrEquals',
  '>': 'greater',
  '>=': 'greaterOrEquals',
};

const PATTERN_OPERATORS: ReadonlySet<string> = new Set([
  'like',
  'ilike',
  'not like',
  'not ilike',
  '=~',
  '!~',
  '=~*',
  '!~*',
]);

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

const DATE_FORMATS = 'use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss[.ffffff][Z|±hh:mm]';

export function compileComparison(
  compiler: ExpressionCompiler,
  operator: CompareOperator | PatternOperator,
  left: AstNode,
  right: AstNode,
  node: AstNode,
): SqlExpr {
  if (PATTERN_OPERATORS.has(operator)) {
    return pattern(compiler, operator as PatternOperator, left, right, node);
  }
  const op = operator as CompareOperator;
  const leftIsNull = isNullLiteral(left);
  const rightIsNull = isNullLiteral(right);
  if (leftIsNull || rightIsNull) {
    const other = leftIsNull && rightIsNull ? undefined : compiler.value(leftIsNull ? right : left);
    if (op === '==' || op === '!=') {
      if (!other) return sqlExpr(op === '==' ? '1' : '0', 'bool');
      const check = op === '==' ? 'isNull' : 'isNotNull';
      return sqlExpr(`${check}(${other.sql})`, 'bool', { aggregate: other.aggregate });
    }
    // Ordering against NULL is never true (PostHog's printer folds it the same way).
    return sqlExpr('0', 'bool', { aggregate: other?.aggregate ?? false });
  }
  const [leftValue, rightValue] = comparable(compiler, left, right, node);
  const sql = `${COMPARE_FUNCTIONS[op]}(${leftValue.sql}, ${rightValue.sql})`;
  return nullSafe(op === '==' ? 'match' : op === '!=' ? 'mismatch' : 'order', sql, leftValue, rightValue);
}

/** A literal compared with a date-time, date or UUID is parsed here: a bad one is a 400. */
function comparable(
  compiler: ExpressionCompiler,
  left: AstNode,
  right: AstNode,
  node: AstNode,
): [SqlExpr, SqlExpr] {
  const leftText = stringLiteralOf(left);
  const rightText = stringLiteralOf(right);
  const leftValue = leftText === undefined ? compiler.value(left) : undefined;
  const rightValue = rightText === undefined ? compiler.value(right) : undefined;
  if (leftValue && rightText !== undefined && needsParsedLiteral(leftValue.type)) {
    return againstTypedLiteral(compiler, leftValue, rightText, right);
  }
  if (rightValue && leftText !== undefined && needsParsedLiteral(rightValue.type)) {
    const [value, literal] = againstTypedLiteral(compiler, rightValue, leftText, left);
    return [literal, value];
  }
  const leftFinal = leftValue ?? compiler.value(left);
  const rightFinal = rightValue ?? compiler.value(right);
  // A property compared with true/false compares its text, `{"a": true}` reading `true`.
  if (isStringLike(leftFinal.type) && isBooleanLiteral(right)) {
    return [leftFinal, booleanText(compiler, right)];
  }
  if (isStringLike(rightFinal.type) && isBooleanLiteral(left)) {
    return [booleanText(compiler, left), rightFinal];
  }
  const type = compiler.commonType([leftFinal, rightFinal], 'a comparison', node);
  if (type === 'interval') throw compiler.error('Intervals cannot be compared', node, 'type');
  return [coerceTo(leftFinal, type), coerceTo(rightFinal, type)];
}

/** `value` compared with the literal `text`, which must read as the value's type. */
function againstTypedLiteral(
  compiler: ExpressionCompiler,
  value: SqlExpr,
  text: string,
  literalNode: AstNode,
): [SqlExpr, SqlExpr] {
  if (value.type === 'uuid') {
    if (!UUID.test(text)) throw compiler.error('Not a UUID', literalNode, 'value');
    return [value, sqlExpr(`toUUID(${compiler.params.string(text)})`, 'uuid', { literal: true })];
  }
  const parsed = parseAbsoluteDate(text);
  if (!parsed) {
    throw compiler.error(`Not a date or date-time (${DATE_FORMATS})`, literalNode, 'value');
  }
  if (value.type === 'date' && parsed.dateOnly) {
    return [
      value,
      sqlExpr(`toDate(${compiler.params.string(formatClickHouseDate(parsed))})`, 'date', { literal: true }),
    ];
  }
  return [coerceTo(value, 'datetime'), dateTimeLiteral(compiler, text, literalNode)];
}

function booleanText(compiler: ExpressionCompiler, node: AstNode): SqlExpr {
  const text = constantValue(node)?.value === true ? 'true' : 'false';
  return sqlExpr(compiler.params.string(text), 'string', { literal: true });
}

export function dateTimeLiteral(compiler: ExpressionCompiler, text: string, node: AstNode): SqlExpr {
  const parsed = parseAbsoluteDate(text);
  if (!parsed) {
    throw compiler.error(`Not a date or date-time (${DATE_FORMATS})`, node, 'value');
  }
  const value = compiler.params.string(formatClickHouseDateTime(parsed));
  return sqlExpr(`toDateTime64(${value}, 6, 'UTC')`, 'datetime', { literal: true });
}

function pattern(
  compiler: ExpressionCompiler,
  operator: PatternOperator,
  left: AstNode,
  right: AstNode,
  node: AstNode,
): SqlExpr {
  const value = compiler.value(left);
  if (value.type === 'interval') throw compiler.error('An interval cannot be matched', node, 'type');
  const subject =
    isStringLike(value.type) || value.type === 'null'
      ? value
      : sqlExpr(`toString(${value.sql})`, 'string', { aggregate: value.aggregate });
  let sql: string;
  switch (operator) {
    case 'like':
      sql = `like(${subject.sql}, ${compiler.likeLiteral(right, 'LIKE')})`;
      break;
    case 'ilike':
      sql = `ilike(${subject.sql}, ${compiler.likeLiteral(right, 'ILIKE')})`;
      break;
    case 'not like':
      sql = `notLike(${subject.sql}, ${compiler.likeLiteral(right, 'NOT LIKE')})`;
      break;
    case 'not ilike':
      sql = `notILike(${subject.sql}, ${compiler.likeLiteral(right, 'NOT ILIKE')})`;
      break;
    case '=~':
      sql = `match(${subject.sql}, ${compiler.regexLiteral(right, '=~')})`;
      break;
    case '=~*':
      sql = `match(${subject.sql}, ${compiler.regexLiteral(right, '=~*', '(?i)')})`;
      break;
    case '!~':
      sql = `not(match(${subject.sql}, ${compiler.regexLiteral(right, '!~')}))`;
      break;
    case '!~*':
      sql = `not(match(${subject.sql}, ${compiler.regexLiteral(right, '!~*', '(?i)')}))`;
      break;
  }
  const negative = operator.startsWith('not') || operator.startsWith('!');
  const literal = sqlExpr('', 'string', { literal: true });
  return nullSafe(negative ? 'mismatch' : 'match', sql, subject, literal);
}

export function compileInList(
  compiler: ExpressionCompiler,
  operator: 'in' | 'not in',
  left: AstNode,
  right: AstNode,
  node: AstNode,
): SqlExpr {
  const items =
    right.node === 'Tuple' || right.node === 'Array'
      ? childNodes(right, 'exprs')
      : right.node === 'Constant'
        ? [right]
        : undefined;
  if (!items) throw compiler.error('IN takes a list of literals, like x IN (1, 2)', right);
  const literals = items.map((item) => {
    const literal = constantValue(item);
    if (!literal) throw compiler.error('IN lists may only hold literals', item);
    if (literal.value === null)
      throw compiler.error('NULL never matches in an IN list; use IS NULL', item, 'value');
    return literal.value;
  });
  const value = compiler.value(left);
  if (literals.length === 0) {
    return sqlExpr(operator === 'in' ? '0' : '1', 'bool', { aggregate: value.aggregate });
  }
  const strings = literals.every((literal) => typeof literal === 'string');
  const numbers = literals.every((literal) => typeof literal !== 'string');
  if (!strings && !numbers) throw compiler.error('IN lists cannot mix strings and numbers', right, 'type');
  let subject: SqlExpr;
  let listSql: string[];
  if (strings && needsParsedLiteral(value.type)) {
    const pairs = items.map((item, index) => againstTypedLiteral(compiler, value, literals[index], item));
    subject = pairs[0][0];
    listSql = pairs.map((pair) => pair[1].sql);
  } else {
    const compiled = items.map((item) => compiler.value(item));
    const type = compiler.commonType([value, ...compiled], 'IN', node);
    if (type === 'interval') throw compiler.error('Intervals cannot be compared', node, 'type');
    subject = coerceTo(value, type);
    listSql = compiled.map((item) => coerceTo(item, type).sql);
  }
  const fn = operator === 'in' ? 'in' : 'notIn';
  let sql = `${fn}(${subject.sql}, tuple(${listSql.join(', ')}))`;
  if (subject.nullable) sql = `ifNull(${sql}, ${operator === 'in' ? 0 : 1})`;
  return sqlExpr(sql, 'bool', { aggregate: subject.aggregate });
}

/** PostHog's printer: a match of NULL is false, a mismatch true (unless both are NULL), ordering false. */
function nullSafe(kind: 'match' | 'mismatch' | 'order', sql: string, left: SqlExpr, right: SqlExpr): SqlExpr {
  const aggregate = left.aggregate || right.aggregate;
  if (!left.nullable && !right.nullable) return sqlExpr(sql, 'bool', { aggregate });
  const oneLiteral = left.literal || right.literal;
  let wrapped: string;
  if (kind === 'match') {
    wrapped = oneLiteral
      ? `ifNull(${sql}, 0)`
      : `ifNull(${sql}, and(isNull(${left.sql}), isNull(${right.sql})))`;
  } else if (kind === 'mismatch') {
    wrapped = oneLiteral
      ? `ifNull(${sql}, 1)`
      : `ifNull(${sql}, or(isNotNull(${left.sql}), isNotNull(${right.sql})))`;
  } else {
    wrapped = `ifNull(${sql}, 0)`;
  }
  return sqlExpr(wrapped, 'bool', { aggregate });
}

function isNullLiteral(node: AstNode): boolean {
  const literal = constantValue(node);
  return literal !== undefined && literal.value === null;
}

function isBooleanLiteral(node: AstNode): boolean {
  return typeof constantValue(node)?.value === 'boolean';
}

function stringLiteralOf(node: AstNode): string | undefined {
  const literal = constantValue(node);
  return literal && typeof literal.value === 'string' && !literal.numberText ? literal.value : undefined;
}

function needsParsedLiteral(type: SqlType): boolean {
  return type === 'datetime' || type === 'date' || type === 'uuid';
}

/**
 * ClickHouse refuses a LIKE pattern that ends in an unfinished escape; anything else is a pattern.
 */
export function likePatternError(pattern: string): string | undefined {
  const trailing = /\\+$/.exec(pattern);
  if (trailing && trailing[0].length % 2 === 1) return 'it ends with an unescaped backslash';
  return undefined;
}
