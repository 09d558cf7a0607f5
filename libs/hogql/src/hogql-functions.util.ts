import type { HogQLFunction } from './hogql-function.util';
import { AGGREGATE_FUNCTIONS } from './hogql-functions-aggregate.util';
import { DATE_FUNCTIONS } from './hogql-functions-date.util';
import { CONDITIONAL_FUNCTIONS, NUMBER_FUNCTIONS, OPERATOR_FUNCTIONS } from './hogql-functions-logic.util';
import { CONVERSION_FUNCTIONS, JSON_FUNCTIONS, STRING_FUNCTIONS } from './hogql-functions-text.util';

export type { CallInfo, HogQLFunction } from './hogql-function.util';

/**
 * Keyed by lower-cased name. Left out on purpose: functions that allocate in proportion to an
 * argument (`repeat`, `range`), read other tables or the server (`dictGet`, `file`, `url`), or whose
 * argument errors are hard to rule out up front (time zones, format strings).
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
