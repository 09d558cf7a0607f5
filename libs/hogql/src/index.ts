export {
  BATCH_EXPORT_QUERY_ERRORS,
  compileBatchExportQuery,
  DEFAULT_BATCH_EXPORT_QUERY_LIMITS,
  quoteClickHouseIdentifier,
  type BatchExportColumn,
  type BatchExportField,
  type BatchExportQueryLimits,
  type BatchExportQueryOptions,
  type CompiledBatchExportQuery,
} from './batch-export-query';
export { hogqlErrorFromClickHouse } from './clickhouse-error';
export {
  compileHogQLSelect,
  compileHogQLWhere,
  HogQLCompiler,
  parseExpressionListParam,
  type CompiledColumn,
  type CompiledSelect,
  type CompiledWhere,
  type HogQLCompilerOptions,
} from './hogql-compiler';
export { HogQLError, isHogQLError, type HogQLErrorAttr, type HogQLErrorKind } from './hogql-error';
export { EVENT_FIELDS, PERSON_TUPLE_FIELDS, STAR_FIELDS } from './hogql-fields';
export { hogqlFunctionNames } from './hogql-functions';
export { DEFAULT_HOGQL_LIMITS, type HogQLLimits } from './hogql-limits';
export {
  closeSharedHogQLParser,
  HogQLParser,
  sharedHogQLParser,
  type HogQLParserOptions,
} from './hogql-parser';
export {
  compilePropertyFilters,
  DEFAULT_PROPERTY_FILTER_LIMITS,
  parsePropertiesParam,
  PROPERTY_FILTER_OPERATORS,
  type PropertyFilterLimits,
  type PropertyFilterOperator,
  type PropertyFilterOptions,
} from './property-filter';
export {
  QueryParams,
  type QueryParamsOptions,
  type QueryParamType,
  type QueryParamValues,
} from './query-params';
export { re2SyntaxError } from './re2-syntax';
export {
  addMicros,
  formatClickHouseDateTime,
  ONE_DAY_MICROS,
  ONE_SECOND_MICROS,
  parseFilterDate,
  type DateValue,
} from './date-value';
