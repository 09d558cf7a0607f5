import { HogQLError, type HogQLErrorAttr } from './hogql.errors';

/**
 * ClickHouse errors a user's expression can still cause after the compiler's checks (a value that
 * only fails at run time, a regex RE2 finds too large). Keyed by the exception name
 * `@clickhouse/client` puts in `ClickHouseError.type`, with the numeric code as fallback.
 */
const USER_ERRORS: ReadonlyMap<string, string> = new Map([
  ['CANNOT_PARSE_TEXT', '6'],
  ['CANNOT_PARSE_ESCAPE_SEQUENCE', '25'],
  ['CANNOT_PARSE_NUMBER', '27'],
  ['CANNOT_PARSE_DATE', '38'],
  ['CANNOT_PARSE_DATETIME', '41'],
  ['NUMBER_OF_ARGUMENTS_DOESNT_MATCH', '42'],
  ['ILLEGAL_TYPE_OF_ARGUMENT', '43'],
  ['ILLEGAL_COLUMN', '44'],
  ['TYPE_MISMATCH', '53'],
  ['ARGUMENT_OUT_OF_BOUND', '69'],
  ['CANNOT_CONVERT_TYPE', '70'],
  ['TOO_LARGE_STRING_SIZE', '131'],
  ['ILLEGAL_DIVISION', '153'],
  ['TOO_DEEP_AST', '167'],
  ['TOO_BIG_AST', '168'],
  ['ILLEGAL_AGGREGATION', '184'],
  ['NOT_AN_AGGREGATE', '215'],
  ['VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE', '321'],
  ['CANNOT_PARSE_UUID', '376'],
  ['NO_COMMON_TYPE', '386'],
  ['DECIMAL_OVERFLOW', '407'],
  ['CANNOT_COMPILE_REGEXP', '427'],
  ['BAD_ARGUMENTS', '36'],
]);
const USER_ERROR_CODES = new Set(USER_ERRORS.values());

/**
 * A HogQLError (400) for an error the user's expression caused, else undefined (a 500). The message
 * names the ClickHouse error, not its text, which quotes the generated SQL.
 */
export function hogqlErrorFromClickHouse(error: unknown, attr?: HogQLErrorAttr): HogQLError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { type, code } = error as { type?: unknown; code?: unknown };
  const name = typeof type === 'string' && USER_ERRORS.has(type) ? type : undefined;
  const byCode =
    name === undefined && typeof code === 'string' && USER_ERROR_CODES.has(code)
      ? [...USER_ERRORS].find(([, value]) => value === code)?.[0]
      : undefined;
  const matched = name ?? byCode;
  if (matched === undefined) return undefined;
  return new HogQLError(`The query could not run on these expressions (ClickHouse ${matched})`, {
    kind: 'type',
    attr,
  });
}
