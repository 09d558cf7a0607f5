// The event listing's select, where and properties, a batch export's hogql_query, and whole HogQL statements.
export { HogQLCompiler, parseExpressionListParam, type CompiledSelect } from './hogql-compiler.util';
export { compilePropertyFilters, parsePropertiesParam } from './property-filter.util';
export { compileBatchExportQuery } from './batch-export-query.util';
export {
  DEFAULT_RETURNED_ROWS,
  HogQLStatementCompiler,
  MAX_SELECT_RETURNED_ROWS,
  type CompiledStatement,
  type HogQLStatementOptions,
} from './hogql-select.util';
export { HOGQL_TABLES } from './hogql-tables.util';
export { QueryParams } from './query-params.util';
export { EVENT_FIELDS, STAR_FIELDS } from './hogql-fields.util';
export { closeSharedHogQLParser, sharedHogQLParser } from './hogql-parser.util';
export { HogQLError } from './hogql.errors';
export { hogqlErrorFromClickHouse } from './clickhouse-error.util';

// Date-times of the listing's windows.
export {
  addMicros,
  formatClickHouseDateTime,
  ONE_DAY_MICROS,
  ONE_SECOND_MICROS,
  parseFilterDate,
  type DateValue,
} from './date-value.util';
