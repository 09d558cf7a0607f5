import type { HogQLFunction } from './hogql-function';
import { AGGREGATE_FUNCTIONS } from './hogql-functions-aggregate';
import { DATE_FUNCTIONS } from './hogql-functions-date';
import { CONDITIONAL_FUNCTIONS, NUMBER_FUNCTIONS, OPERATOR_FUNCTIONS } from './hogql-functions-logic';
import { CONVERSION_FUNCTIONS, JSON_FUNCTIONS, STRING_FUNCTIONS } from './hogql-functions-text';

export type { CallInfo, HogQLFunction } from './hogql-function';

/**
 * The functions a HogQL expression may call: a curated list, each compiled to a fixed ClickHouse
 * function with its arguments checked. Names match case-insensitively (like ClickHouse's own
 * aggregate names); the SQL always uses the canonical ClickHouse name. Anything not listed is
 * refused. Left out on purpose: functions that allocate in proportion to an argument (`repeat`,
 * `leftPad`, `range`), that read other tables or the server (`dictGet`, `file`, `url`), or whose
 * argument errors are hard to rule out up front (time zones, format strings).
 *
 * Keyed by lower-cased name.
 */
export const HOGQL_FUNCTIONS: ReadonlyMap<string, HogQLFunction> = new Map([
  ...AGGREGATE_FUNCTIONS,
  ...STRING_FUNCTIONS,
  ...CONVERSION_FUNCTIONS,
  ...DATE_FUNCTIONS,
  ...CONDITIONAL_FUNCTIONS,
  ...NUMBER_FUNCTIONS,
  ...JSON_FUNCTIONS,
  ...OPERATOR_FUNCTIONS,
]);

export function findHogQLFunction(name: string): HogQLFunction | undefined {
  return HOGQL_FUNCTIONS.get(name.toLowerCase());
}

/** The documented names, for docs and error messages. */
export function hogqlFunctionNames(): { aggregates: string[]; functions: string[] } {
  const aggregates: string[] = [];
  const functions: string[] = [];
  for (const spec of HOGQL_FUNCTIONS.values()) {
    if (spec.name.startsWith('_')) continue;
    (spec.aggregate ? aggregates : functions).push(spec.name);
  }
  return { aggregates: aggregates.sort(), functions: functions.sort() };
}
