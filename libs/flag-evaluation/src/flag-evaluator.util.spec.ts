import type {
  CohortDefinition,
  EvaluationContext,
  FlagConditionGroup,
  FlagDefinition,
  FlagFilters,
} from './flag-definition.types';
import { flagValue } from './flag-definition.types';
import { evaluateFlag, evaluateFlags } from './flag-evaluator.util';
import { calculateHash, flagHash } from './flag-hash.util';
import { MULTIVARIATE_FLAG_RESULTS, SIMPLE_FLAG_RESULTS } from './testing/consistency-vectors.constants';

function flag(key: string, filters: FlagFilters, extra: Partial<FlagDefinition> = {}): FlagDefinition {
  return { id: 1, key, active: true, deleted: false, filters, ...extra };
}

function conditions(...groups: FlagConditionGroup[]): FlagFilters {
  return { groups };
}

describe('hashing', () => {
  // PostHog/posthog rust/feature-flags/src/flags/flag_matching_utils.rs `test_calculate_hash`
  // (the same vectors are in posthog/models/feature_flag/test for the Python matcher).
  it.each([
    ['some_distinct_id', 0.7270002403585725],
    ['test-identifier', 0.4493881716040236],
    ['example_id', 0.9402003475831224],
    ['example_id2', 0.6292740389966519],
  ])('hashes holdout-%s to %p', (identifier, expected) => {
    expect(calculateHash('holdout-', identifier, '')).toBe(expected);
  });

  // PostHog/posthog-python posthog/test/test_feature_flags.py `test_simple_flag_consistency`
  it('rolls simple-flag out at 45% to exactly the SDK suites distinct ids', () => {
    const simple = flag('simple-flag', conditions({ properties: [], rollout_percentage: 45 }));
    const actual = Array.from({ length: 1000 }, (_, index) =>
      evaluateFlag(simple, { distinctId: `distinct_id_${index}` }).enabled ? '1' : '0',
    ).join('');
    expect(actual).toBe(SIMPLE_FLAG_RESULTS);
  });

  // PostHog/posthog-python posthog/test/test_feature_flags.py `test_multivariate_flag_consistency`
  it('assigns multivariate-flag variants exactly as the SDK suites expect', () => {
    const names = ['first-variant', 'second-variant', 'third-variant', 'fourth-variant', 'fifth-variant'];
    const multivariate = flag('multivariate-flag', {
      groups: [{ properties: [], rollout_percentage: 55 }],
      multivariate: {
        variants: [50, 20, 20, 5, 5].map((rollout, index) => ({
          key: names[index],
          rollout_percentage: rollout,
        })),
      },
    });
    const actual = Array.from({ length: 1000 }, (_, index) => {
      const value = flagValue(evaluateFlag(multivariate, { distinctId: `distinct_id_${index}` }));
      return value === false ? '0' : String(names.indexOf(value as string) + 1);
    }).join('');
    expect(actual).toBe(MULTIVARIATE_FLAG_RESULTS);
  });
});

describe('evaluateFlag', () => {
  describe('early access (super conditions)', () => {
    // PostHog/posthog rust/feature-flags/src/flags/test_flag_matching.rs
    // `test_super_condition_matches_and_false` and `test_super_condition_matches_boolean`
    const superFlag = (superValue: unknown) =>
      flag('super_condition_flag', {
        groups: [
          {
            properties: [{ key: 'email', type: 'person', operator: 'exact', value: 'fake@posthog.com' }],
            rollout_percentage: 0,
          },
          {
            properties: [{ key: 'email', type: 'person', operator: 'exact', value: 'test@posthog.com' }],
            rollout_percentage: 100,
          },
          { properties: null, rollout_percentage: 50 },
        ],
        super_groups: [
          {
            properties: [{ key: 'is_enabled', type: 'person', operator: 'exact', value: superValue }],
            rollout_percentage: 100,
          },
        ],
      });
    const testId = {
      distinctId: 'test_id',
      personProperties: { email: 'test@posthog.com', is_enabled: true },
    };

    it('decides by the super condition when the person has its property', () => {
      const result = evaluateFlag(superFlag(false), testId);
      expect(result).toMatchObject({
        enabled: false,
        reason: { code: 'super_condition_value', condition_index: 0, description: 'Super condition value' },
      });
      expect(evaluateFlag(superFlag(['true']), testId)).toMatchObject({
        enabled: true,
        reason: { code: 'super_condition_value', condition_index: 0 },
      });
    });

    it('falls through to the release conditions otherwise', () => {
      expect(evaluateFlag(superFlag(false), { distinctId: 'lil_id' })).toMatchObject({
        enabled: true,
        reason: { code: 'condition_match', condition_index: 2, description: 'Matched condition set 3' },
      });
      expect(evaluateFlag(superFlag(false), { distinctId: 'another_id' })).toMatchObject({
        enabled: false,
        reason: { code: 'out_of_rollout_bound', condition_index: 2, description: 'Out of rollout bound' },
      });
    });

    it('reads $feature_enrollment/<key> for the current enrollment format', () => {
      const enrolled = flag('beta-x', {
        feature_enrollment: true,
        groups: [{ rollout_percentage: 0 }],
        payloads: { true: '1' },
      });
      expect(
        evaluateFlag(enrolled, {
          distinctId: 'u',
          personProperties: { '$feature_enrollment/beta-x': 'true' },
        }),
      ).toMatchObject({
        enabled: true,
        reason: { code: 'super_condition_value', condition_index: 0 },
        metadata: { payload: '1' },
      });
      expect(
        evaluateFlag(enrolled, {
          distinctId: 'u',
          personProperties: { '$feature_enrollment/beta-x': false },
        }),
      ).toMatchObject({ enabled: false, reason: { code: 'super_condition_value' } });
      expect(evaluateFlag(enrolled, { distinctId: 'u' })).toMatchObject({
        enabled: false,
        reason: { code: 'out_of_rollout_bound' },
      });
    });
  });

  describe('reasons', () => {
    it('reports the last non-matching condition at the best-ranked reason', () => {
      const noMatch = flag(
        'reasons',
        conditions(
          { properties: [{ key: 'plan', type: 'person', value: 'pro' }] },
          { properties: [{ key: 'plan', type: 'person', value: 'team' }] },
        ),
      );
      expect(evaluateFlag(noMatch, { distinctId: 'u', personProperties: { plan: 'free' } }).reason).toEqual({
        code: 'no_condition_match',
        condition_index: 1,
        description: 'No matching condition set',
      });

      const outOfRollout = flag(
        'reasons',
        conditions(
          { properties: [], rollout_percentage: 0 },
          { properties: [{ key: 'plan', type: 'person', value: 'pro' }] },
        ),
      );
      // out_of_rollout_bound outranks no_condition_match, so condition 0 is reported.
      expect(evaluateFlag(outOfRollout, { distinctId: 'u' }).reason).toEqual({
        code: 'out_of_rollout_bound',
        condition_index: 0,
        description: 'Out of rollout bound',
      });
    });

    it('reports no_group_type when a group flag has no group key', () => {
      const groupFlag = flag('org-flag', {
        aggregation_group_type_index: 0,
        groups: [{ properties: [], rollout_percentage: 100 }],
      });
      const context = { distinctId: 'u', groupTypeMapping: { '0': 'organization' } };
      expect(evaluateFlag(groupFlag, context)).toMatchObject({
        enabled: false,
        variant: null,
        reason: { code: 'no_group_type', condition_index: 0, description: 'No group type' },
      });
      expect(evaluateFlag(groupFlag, { ...context, groups: { organization: '' } }).reason.code).toBe(
        'no_group_type',
      );
      expect(evaluateFlag(groupFlag, { ...context, groups: { organization: 'acme' } }).enabled).toBe(true);
    });

    it('says group conditions were skipped when person conditions did not match either', () => {
      const mixed = flag(
        'mixed',
        conditions(
          { properties: [{ key: 'plan', type: 'person', value: 'pro' }] },
          { aggregation_group_type_index: 0, properties: [], rollout_percentage: 100 },
        ),
      );
      expect(
        evaluateFlag(mixed, { distinctId: 'u', groupTypeMapping: { '0': 'organization' } }).reason,
      ).toEqual({
        code: 'no_condition_match',
        condition_index: 0,
        description:
          'No matching condition set (group conditions were not evaluated because no group type was provided)',
      });
    });

    it('answers an inactive flag as disabled and leaves it out of evaluateFlags', () => {
      const inactive = flag('off', conditions({ rollout_percentage: 100 }), { active: false });
      expect(evaluateFlag(inactive, { distinctId: 'u' })).toEqual({
        key: 'off',
        enabled: false,
        variant: null,
        reason: { code: 'flag_disabled', condition_index: null, description: 'Feature flag is disabled' },
        metadata: { id: 1, version: 0, description: null, payload: null, has_experiment: false },
      });
      expect(evaluateFlags([inactive], { distinctId: 'u' })).toEqual({});
      expect(evaluateFlags([{ ...inactive, active: true, deleted: true }], { distinctId: 'u' })).toEqual({});
    });
  });

  describe('variants and payloads', () => {
    const variants = [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ];
    const payloads = { control: '{"color":"blue"}', test: '"red"', true: '{"on":true}' };

    it('returns the full /flags?v=2 entry with the variant payload', () => {
      const multivariate = flag(
        'exp',
        { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants }, payloads },
        { id: 7, version: 3, has_experiment: true },
      );
      const result = evaluateFlag(multivariate, { distinctId: 'user-1' });
      const expectedVariant = flagHash('exp', 'user-1', 'variant') < 0.5 ? 'control' : 'test';
      expect(result).toEqual({
        key: 'exp',
        enabled: true,
        variant: expectedVariant,
        reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
        metadata: {
          id: 7,
          version: 3,
          description: null,
          payload: payloads[expectedVariant],
          has_experiment: true,
        },
      });
    });

    it('uses a condition variant override only when the variant exists', () => {
      const overridden = (variant: string) =>
        flag('exp', { groups: [{ properties: [], variant }], multivariate: { variants } });
      for (let index = 0; index < 20; index++) {
        expect(evaluateFlag(overridden('test'), { distinctId: `u${index}` }).variant).toBe('test');
        const fallback = evaluateFlag(overridden('gone'), { distinctId: `u${index}` }).variant;
        expect(fallback).toBe(flagHash('exp', `u${index}`, 'variant') < 0.5 ? 'control' : 'test');
      }
    });

    it('evaluates conditions in order, without moving overrides first', () => {
      // PostHog/posthog#37859 removed the old sort of override conditions to the top.
      const ordered = flag('exp', {
        groups: [
          { properties: [{ key: 'plan', type: 'person', value: 'pro' }], variant: 'control' },
          { properties: [{ key: 'plan', type: 'person', value: 'pro' }], variant: 'test' },
        ],
        multivariate: { variants },
      });
      expect(evaluateFlag(ordered, { distinctId: 'u', personProperties: { plan: 'pro' } }).variant).toBe(
        'control',
      );
    });

    it('gives a boolean flag the "true" payload and a non-match none', () => {
      const boolean = flag('b', {
        groups: [{ properties: [{ key: 'plan', type: 'person', value: 'pro' }] }],
        payloads,
      });
      expect(
        evaluateFlag(boolean, { distinctId: 'u', personProperties: { plan: 'pro' } }).metadata.payload,
      ).toBe('{"on":true}');
      expect(
        evaluateFlag(boolean, { distinctId: 'u', personProperties: { plan: 'free' } }).metadata.payload,
      ).toBeNull();
    });

    it('puts people inside an experiment holdout into holdout-<id>', () => {
      const withHoldout = (exclusion: number) =>
        flag('exp', {
          groups: [{ properties: [], rollout_percentage: 100 }],
          multivariate: { variants },
          holdout: { id: 42, exclusion_percentage: exclusion },
          payloads: { 'holdout-42': '"held"' },
        });
      expect(evaluateFlag(withHoldout(100), { distinctId: 'anyone' })).toMatchObject({
        enabled: true,
        variant: 'holdout-42',
        reason: {
          code: 'holdout_condition_value',
          condition_index: null,
          description: 'Holdout condition value',
        },
        metadata: { payload: '"held"' },
      });
      // holdout-some_distinct_id hashes to 0.727 (vector above): inside 80%, outside 70%.
      expect(evaluateFlag(withHoldout(80), { distinctId: 'some_distinct_id' }).variant).toBe('holdout-42');
      expect(evaluateFlag(withHoldout(70), { distinctId: 'some_distinct_id' }).variant).not.toBe(
        'holdout-42',
      );
    });
  });

  describe('identifiers', () => {
    const half = (filters: Partial<FlagFilters> = {}, extra: Partial<FlagDefinition> = {}) =>
      flag('half', { groups: [{ properties: [], rollout_percentage: 50 }], ...filters }, extra);
    // 'half.' hashes these ids on opposite sides of 50%.
    const ids = Array.from({ length: 40 }, (_, index) => `id-${index}`);
    const inside = ids.find((id) => flagHash('half', id) <= 0.5)!;
    const outside = ids.find((id) => flagHash('half', id) > 0.5)!;

    it('hashes the group key of the aggregation group type', () => {
      const context: EvaluationContext = {
        distinctId: outside,
        groupTypeMapping: { '1': 'company' },
        groups: { company: inside },
      };
      expect(evaluateFlag(half({ aggregation_group_type_index: 1 }), context).enabled).toBe(true);
      expect(
        evaluateFlag(half({ aggregation_group_type_index: 1 }), { ...context, groups: { company: outside } })
          .enabled,
      ).toBe(false);
    });

    it('hashes the stored hash key override for experience continuity', () => {
      const continuity = half({}, { ensure_experience_continuity: true });
      expect(
        evaluateFlag(continuity, { distinctId: outside, hashKeyOverrides: { half: inside } }).enabled,
      ).toBe(true);
      expect(evaluateFlag(continuity, { distinctId: outside, anonDistinctId: inside }).enabled).toBe(true);
      // Without continuity the request's anonymous id is not used.
      expect(evaluateFlag(half(), { distinctId: outside, anonDistinctId: inside }).enabled).toBe(false);
    });

    it('hashes the device id for device bucketing, and cannot place a person without one', () => {
      const byDevice = half({}, { bucketing_identifier: 'device_id' });
      expect(evaluateFlag(byDevice, { distinctId: outside, deviceId: inside }).enabled).toBe(true);
      expect(evaluateFlag(byDevice, { distinctId: inside }).reason.code).toBe('out_of_rollout_bound');
    });
  });

  describe('properties', () => {
    it('knows the distinct id and fills $initial_ properties from current ones', () => {
      const byId = flag(
        'f',
        conditions({ properties: [{ key: 'distinct_id', type: 'person', value: 'ann' }] }),
      );
      expect(evaluateFlag(byId, { distinctId: 'ann' }).enabled).toBe(true);
      const initial = flag(
        'f',
        conditions({ properties: [{ key: '$initial_browser', type: 'person', value: 'Chrome' }] }),
      );
      expect(
        evaluateFlag(initial, { distinctId: 'u', personProperties: { $browser: 'Chrome' } }).enabled,
      ).toBe(true);
      expect(
        evaluateFlag(initial, {
          distinctId: 'u',
          personProperties: { $browser: 'Chrome', $initial_browser: 'Firefox' },
        }).enabled,
      ).toBe(false);
    });

    it('reads group filters from that group and person filters from the person', () => {
      const mixed = flag('f', {
        aggregation_group_type_index: 0,
        groups: [
          {
            properties: [
              { key: 'plan', type: 'group', value: 'enterprise' },
              { key: 'role', type: 'person', value: 'admin' },
            ],
          },
        ],
      });
      const context: EvaluationContext = {
        distinctId: 'u',
        groups: { company: 'acme' },
        groupTypeMapping: { '0': 'company' },
        groupProperties: { company: { plan: 'enterprise' } },
        personProperties: { role: 'admin' },
      };
      expect(evaluateFlag(mixed, context).enabled).toBe(true);
      expect(evaluateFlag(mixed, { ...context, personProperties: { role: 'viewer' } }).enabled).toBe(false);
    });
  });

  describe('cohorts', () => {
    const cohorts: Record<string, CohortDefinition> = {
      '1': {
        id: 1,
        properties: {
          type: 'OR',
          values: [
            {
              type: 'AND',
              values: [{ key: 'email', type: 'person', operator: 'icontains', value: '@posthog.com' }],
            },
            { type: 'AND', values: [{ key: 'id', type: 'cohort', operator: 'in', value: 2 }] },
          ],
        },
      },
      '2': {
        id: 2,
        properties: {
          type: 'AND',
          values: [
            {
              type: 'AND',
              values: [{ key: 'plan', type: 'person', operator: 'exact', value: 'free', negation: true }],
            },
          ],
        },
      },
      '3': { id: 3, is_static: true },
    };
    const inCohort = (cohortId: number, operator = 'in') =>
      flag('c', conditions({ properties: [{ key: 'id', type: 'cohort', operator, value: cohortId }] }));

    it('evaluates dynamic cohorts, nested cohorts and negation', () => {
      const context = (personProperties: Record<string, unknown>): EvaluationContext => ({
        distinctId: 'u',
        personProperties,
        cohorts,
      });
      expect(evaluateFlag(inCohort(1), context({ email: 'a@posthog.com', plan: 'free' })).enabled).toBe(true);
      expect(evaluateFlag(inCohort(1), context({ email: 'a@other.com', plan: 'pro' })).enabled).toBe(true);
      expect(evaluateFlag(inCohort(1), context({ email: 'a@other.com', plan: 'free' })).enabled).toBe(false);
      expect(
        evaluateFlag(inCohort(1, 'not_in'), context({ email: 'a@other.com', plan: 'free' })).enabled,
      ).toBe(true);
    });

    it('asks the caller about static cohorts', () => {
      const members = new Set([3]);
      expect(
        evaluateFlag(inCohort(3), { distinctId: 'u', cohorts, isInStaticCohort: (id) => members.has(id) })
          .enabled,
      ).toBe(true);
      expect(evaluateFlag(inCohort(3), { distinctId: 'u', cohorts }).enabled).toBe(false);
    });

    it('fails the flag for a missing cohort or a cohort cycle', () => {
      expect(evaluateFlag(inCohort(99), { distinctId: 'u', cohorts })).toEqual({
        key: 'c',
        enabled: false,
        variant: null,
        failed: true,
        reason: {
          code: 'dependency_not_found_cohort',
          condition_index: null,
          description: 'Cohort dependency not found',
        },
        metadata: { id: 1, version: 0, description: null, payload: null, has_experiment: false },
      });
      const cyclic: Record<string, CohortDefinition> = {
        '5': {
          id: 5,
          properties: {
            type: 'AND',
            values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: 6 }] }],
          },
        },
        '6': {
          id: 6,
          properties: {
            type: 'AND',
            values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: 5 }] }],
          },
        },
      };
      expect(evaluateFlag(inCohort(5), { distinctId: 'u', cohorts: cyclic }).reason.code).toBe(
        'dependency_cycle_cohort',
      );
    });

    it('only looks at cohorts once the other filters of the condition match', () => {
      const guarded = flag(
        'c',
        conditions({
          properties: [
            { key: 'plan', type: 'person', value: 'pro' },
            { key: 'id', type: 'cohort', value: 99 },
          ],
        }),
      );
      expect(
        evaluateFlag(guarded, { distinctId: 'u', personProperties: { plan: 'free' } }).failed,
      ).toBeUndefined();
    });
  });

  describe('flag dependencies', () => {
    const base = flag(
      'base',
      { groups: [{ properties: [{ key: 'plan', type: 'person', value: 'pro' }] }] },
      { id: 10 },
    );
    const dependent = (value: unknown) =>
      flag(
        'dependent',
        conditions({ properties: [{ key: '10', type: 'flag', operator: 'flag_evaluates_to', value }] }),
        { id: 11 },
      );

    it('matches on the value the other flag evaluated to', () => {
      const pro = { distinctId: 'u', personProperties: { plan: 'pro' } };
      const free = { distinctId: 'u', personProperties: { plan: 'free' } };
      expect(evaluateFlags([dependent(true), base], pro).dependent.enabled).toBe(true);
      expect(evaluateFlags([dependent(true), base], free).dependent.enabled).toBe(false);
      expect(evaluateFlags([dependent(false), base], free).dependent.enabled).toBe(true);
      expect(evaluateFlag(dependent(true), pro, [base, dependent(true)]).enabled).toBe(true);
    });

    it('answers missing_dependency when the flag depended on does not exist', () => {
      expect(evaluateFlag(dependent(true), { distinctId: 'u' })).toMatchObject({
        enabled: false,
        reason: {
          code: 'missing_dependency',
          condition_index: null,
          description: 'Flag cannot be evaluated due to missing dependency',
        },
      });
    });

    it('fails flags that depend on each other', () => {
      const first = flag(
        'first',
        conditions({ properties: [{ key: '21', type: 'flag', operator: 'flag_evaluates_to', value: true }] }),
        {
          id: 20,
        },
      );
      const second = flag(
        'second',
        conditions({ properties: [{ key: '20', type: 'flag', operator: 'flag_evaluates_to', value: true }] }),
        {
          id: 21,
        },
      );
      const results = evaluateFlags([first, second], { distinctId: 'u' });
      expect(results.first).toMatchObject({ failed: true, reason: { code: 'dependency_cycle_flag' } });
      expect(results.second).toMatchObject({ failed: true, reason: { code: 'dependency_cycle_flag' } });
    });

    it('only answers the requested keys', () => {
      const results = evaluateFlags(
        [base, dependent(true)],
        { distinctId: 'u' },
        { flagKeys: ['dependent'] },
      );
      expect(Object.keys(results)).toEqual(['dependent']);
    });
  });
});
