/**
 * The fixed vocabulary compiled SQL is made of. Everything the compilers emit is one of these words
 * or literals, a `{name:Type}` placeholder, a comma or a parenthesis: a request's text can only
 * ever travel as a bound parameter. Fuzz tests check every compiled query against it. Test-only.
 */
const IDENTIFIERS = new Set([
  // columns
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
  // keywords and constants
  'DISTINCT',
  'true',
  'false',
  'NULL',
  // functions
  'equals',
  'notEquals',
  'less',
  'lessOrEquals',
  'greater',
  'greaterOrEquals',
  'plus',
  'minus',
  'multiply',
  'divide',
  'moduloOrZero',
  'like',
  'ilike',
  'notLike',
  'notILike',
  'match',
  'extract',
  'and',
  'or',
  'not',
  'in',
  'notIn',
  'tuple',
  'if',
  'multiIf',
  'ifNull',
  'isNull',
  'isNotNull',
  'coalesce',
  'count',
  'countIf',
  'sum',
  'avg',
  'min',
  'max',
  'uniq',
  'any',
  'lower',
  'upper',
  'lengthUTF8',
  'empty',
  'notEmpty',
  'trimBoth',
  'trimLeft',
  'trimRight',
  'startsWith',
  'endsWith',
  'positionUTF8',
  'concat',
  'substringUTF8',
  'substring',
  'replaceAll',
  'replaceOne',
  'replaceRegexpAll',
  'toString',
  'accurateCastOrNull',
  'toFloat64OrNull',
  'toDate',
  'toDateOrNull',
  'toDateTime',
  'toDateTime64',
  'parseDateTime64BestEffortOrNull',
  'toUUID',
  'now64',
  'today',
  'toStartOfMinute',
  'toStartOfHour',
  'toStartOfDay',
  'toStartOfWeek',
  'toMonday',
  'toStartOfMonth',
  'toStartOfQuarter',
  'toStartOfYear',
  'toYear',
  'toMonth',
  'toDayOfMonth',
  'toDayOfWeek',
  'toHour',
  'toMinute',
  'toSecond',
  'toUnixTimestamp',
  'dateDiff',
  'toIntervalSecond',
  'toIntervalMinute',
  'toIntervalHour',
  'toIntervalDay',
  'toIntervalWeek',
  'toIntervalMonth',
  'toIntervalQuarter',
  'toIntervalYear',
  'round',
  'floor',
  'ceil',
  'abs',
  'sqrt',
  'JSONExtract',
  'JSONExtractString',
  'JSONExtractRaw',
  'JSONExtractInt',
  'JSONExtractFloat',
  'JSONExtractBool',
  'JSONHas',
  'JSONLength',
]);

const QUOTED_IDENTIFIERS = new Set(['`$group_0`', '`$group_1`', '`$group_2`', '`$group_3`', '`$group_4`']);

const STRING_LITERALS = new Set([
  "''",
  "' '",
  "'UTC'",
  "'Int64'",
  "'Float64'",
  "'Nullable(String)'",
  `'^"|"$'`,
  "'second'",
  "'minute'",
  "'hour'",
  "'day'",
  "'week'",
  "'month'",
  "'quarter'",
  "'year'",
]);

const NUMBERS = new Set(['0', '1', '6', '10']);

const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*):(String|Int64|Float64)\}/;

/** The words a whole statement adds: its clauses, the names the compiler makes, the table it reads. */
const STATEMENT_WORDS = new Set([
  'SELECT',
  'FROM',
  'FINAL',
  'WHERE',
  'GROUP',
  'BY',
  'HAVING',
  'ORDER',
  'ASC',
  'DESC',
  'LIMIT',
  'OFFSET',
  'AS',
  'INNER',
  'LEFT',
  'RIGHT',
  'FULL',
  'OUTER',
  'CROSS',
  'JOIN',
  'ON',
  'UNION',
  'ALL',
  'in_subquery',
  'events',
]);

const STATEMENT_NAME = /^(?:t\d+|s\d+_c\d+)$/;

export interface SqlVocabularyOptions {
  /** Check a whole statement: its clauses, `t0.`-qualified columns, `*`, and the table of `database`. */
  statement?: { database: string };
}

/** What in `sql` is not from the fixed vocabulary, or binds a value that is missing or mistyped. */
export function sqlVocabularyViolations(
  sql: string,
  values: Readonly<Record<string, unknown>>,
  options: SqlVocabularyOptions = {},
): string[] {
  const statement = options.statement;
  const violations: string[] = [];
  let rest = sql;
  while (rest.length > 0) {
    const whitespace = /^[ ]+/.exec(rest);
    if (whitespace) {
      rest = rest.slice(whitespace[0].length);
      continue;
    }
    if (rest[0] === '(' || rest[0] === ')' || rest[0] === ',') {
      rest = rest.slice(1);
      continue;
    }
    if (statement && (rest[0] === '.' || rest[0] === '*')) {
      rest = rest.slice(1);
      continue;
    }
    const placeholder = PLACEHOLDER.exec(rest);
    if (placeholder) {
      const [text, name, type] = placeholder;
      const value = values[name];
      const fits =
        type === 'String'
          ? typeof value === 'string'
          : type === 'Int64'
            ? Number.isSafeInteger(value)
            : (typeof value === 'number' && Number.isFinite(value)) ||
              (typeof value === 'string' && Number.isFinite(Number(value)));
      if (!fits) violations.push(`${text} bound to ${JSON.stringify(value)}`);
      rest = rest.slice(text.length);
      continue;
    }
    if (rest[0] === "'") {
      const end = rest.indexOf("'", 1);
      const literal = end < 0 ? rest : rest.slice(0, end + 1);
      if (!STRING_LITERALS.has(literal)) violations.push(`literal ${literal}`);
      rest = rest.slice(literal.length);
      continue;
    }
    if (rest[0] === '`') {
      const end = rest.indexOf('`', 1);
      const quoted = end < 0 ? rest : rest.slice(0, end + 1);
      if (!QUOTED_IDENTIFIERS.has(quoted)) violations.push(`identifier ${quoted}`);
      rest = rest.slice(quoted.length);
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (word) {
      const known =
        IDENTIFIERS.has(word[0]) ||
        (statement !== undefined &&
          (STATEMENT_WORDS.has(word[0]) || STATEMENT_NAME.test(word[0]) || word[0] === statement.database));
      if (!known) violations.push(`word ${word[0]}`);
      rest = rest.slice(word[0].length);
      continue;
    }
    const number = /^[0-9]+/.exec(rest);
    if (number) {
      if (!NUMBERS.has(number[0])) violations.push(`number ${number[0]}`);
      rest = rest.slice(number[0].length);
      continue;
    }
    violations.push(`character ${JSON.stringify(rest[0])}`);
    rest = rest.slice(1);
  }
  return violations;
}
