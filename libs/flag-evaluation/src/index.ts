/**
 * PostHog-compatible feature-flag evaluation: pure functions over plain data, no I/O. The caller
 * loads flags, the person's properties, groups, cohorts and hash key overrides, then:
 *
 *   const results = evaluateFlags(flags, { distinctId, personProperties, groups, groupProperties,
 *     groupTypeMapping, cohorts, isInStaticCohort, hashKeyOverrides });   // `/flags?v=2` entries
 *   const definitions = buildLocalEvaluationPayload({ flags, groupTypeMapping, cohorts });
 */
export {
  flagValue,
  FLAG_PROPERTY_OPERATORS,
  type CohortDefinition,
  type CohortPropertyGroup,
  type EvaluationContext,
  type FlagConditionGroup,
  type FlagDefinition,
  type FlagEvaluationResult,
  type FlagFilters,
  type FlagHoldout,
  type FlagProperty,
  type FlagPropertyOperator,
  type FlagReasonCode,
  type FlagVariant,
  type JsonValue,
  type Properties,
} from './flag-definition';
export { CompiledFlags } from './compiled-flags';
export { evaluateFlag, evaluateFlags, type EvaluateFlagsOptions } from './flag-evaluator';
export { calculateHash, flagHash, isInRollout, variantForHash } from './flag-hash';
export { matchProperty } from './property-matching';
export { flagRegexProblem, MAX_REGEX_PROGRAM_SIZE, MAX_REGEX_SUBJECT_LENGTH } from './regex-matching.util';
export {
  buildLocalEvaluationPayload,
  type LocalEvaluationFlag,
  type LocalEvaluationInput,
  type LocalEvaluationPayload,
} from './local-evaluation-payload';
