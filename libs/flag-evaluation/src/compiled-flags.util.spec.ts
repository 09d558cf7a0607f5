import { CompiledFlags } from './compiled-flags.util';
import type { CohortDefinition, EvaluationContext, FlagDefinition } from './flag-definition.types';
import { evaluateFlags } from './flag-evaluator.util';
import {
  randomCohorts,
  randomContext,
  randomFlags,
  RandomSource,
  seededRandom,
} from './testing/random-flags.util';

const cohortMap = (cohorts: readonly CohortDefinition[]) =>
  Object.fromEntries(cohorts.map((cohort) => [String(cohort.id), cohort]));

describe('CompiledFlags', () => {
  it('answers exactly what the plain definitions answer, for many flags and persons', () => {
    const random = new RandomSource(seededRandom(1313));
    const cohorts = randomCohorts(random, 6, 500);
    const flags = randomFlags(random, 120, cohorts);
    const compiled = new CompiledFlags(flags);
    for (let person = 0; person < 300; person++) {
      const context: EvaluationContext = { ...randomContext(random), cohorts: cohortMap(cohorts) };
      for (const options of [
        { includeInactive: true },
        { flagKeys: flags.slice(0, 7).map((flag) => flag.key) },
      ]) {
        expect(evaluateFlags(compiled, context, options)).toEqual(evaluateFlags(flags, context, options));
      }
    }
  });

  it('shares frozen metadata and reasons between answers, so none can change another', () => {
    const flag: FlagDefinition = {
      id: 7,
      key: 'beta',
      active: true,
      deleted: false,
      version: 3,
      filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"a":1}' } },
    };
    const compiled = new CompiledFlags([flag, { ...flag, id: 8, key: 'gone', deleted: true }]);
    expect(compiled.live.map((live) => live.key)).toEqual(['beta']);
    const first = evaluateFlags(compiled, { distinctId: 'a' }).beta;
    const second = evaluateFlags(compiled, { distinctId: 'b' }).beta;
    expect(second.metadata).toBe(first.metadata);
    expect(second.reason).toBe(first.reason);
    expect(first.metadata).toEqual({
      id: 7,
      version: 3,
      description: null,
      payload: '{"a":1}',
      has_experiment: false,
    });
    expect(first.reason).toEqual({
      code: 'condition_match',
      condition_index: 0,
      description: 'Matched condition set 1',
    });
    expect(Object.isFrozen(first.metadata) && Object.isFrozen(first.reason)).toBe(true);
  });
});
