import type { FlagReasonCode } from './flag-definition.types';

/** A flag that could not be evaluated at all: it answers `failed: true`, `enabled: false` and this code. */
export class FlagEvaluationError extends Error {
  constructor(
    readonly code: Extract<
      FlagReasonCode,
      | 'dependency_not_found_cohort'
      | 'dependency_cycle_cohort'
      | 'dependency_cycle_flag'
      | 'cohort_filters_parsing_error'
    >,
    readonly description: string,
  ) {
    super(description);
    this.name = 'FlagEvaluationError';
  }

  static cohortNotFound(): FlagEvaluationError {
    return new FlagEvaluationError('dependency_not_found_cohort', 'Cohort dependency not found');
  }

  static cohortCycle(): FlagEvaluationError {
    return new FlagEvaluationError('dependency_cycle_cohort', 'Cohort dependency cycle detected');
  }

  static flagCycle(): FlagEvaluationError {
    return new FlagEvaluationError('dependency_cycle_flag', 'Flag dependency cycle detected');
  }

  static cohortFiltersParsing(): FlagEvaluationError {
    return new FlagEvaluationError('cohort_filters_parsing_error', 'Failed to parse cohort filters');
  }
}
