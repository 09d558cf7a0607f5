export {
  flagValue,
  type CohortDefinition,
  type CohortPropertyGroup,
  type EvaluationContext,
  type FlagDefinition,
  type FlagEvaluationResult,
  type FlagFilters,
  type Properties,
} from './flag-definition.types';
export { CompiledFlags } from './compiled-flags.util';
export { evaluateFlag, evaluateFlags } from './flag-evaluator.util';
export { flagRegexProblem } from './regex-matching.util';
export { buildLocalEvaluationPayload, type LocalEvaluationPayload } from './local-evaluation-payload.util';
