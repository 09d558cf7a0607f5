import { CompiledFlags, evaluateFlags, type FlagDefinition } from '@hogbase/flag-evaluation';
import { v2Body, v2Json } from './flag-response.util';

const base = { active: true, deleted: false, version: 2 };

/** Answers of every kind: variants, payloads (text, JSON, none), a failed cycle, keys JSON must escape. */
const FLAGS: FlagDefinition[] = [
  {
    ...base,
    id: 1,
    key: 'variants',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 50 },
          { key: 'test "quoted"', rollout_percentage: 50 },
        ],
      },
      payloads: { control: '{"v": 0}', 'test "quoted"': { nested: ['é', 1] } },
    },
  },
  {
    ...base,
    id: 2,
    key: 'plan "pro" ☃',
    filters: {
      groups: [
        { properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 100 },
        { properties: [], rollout_percentage: 30 },
      ],
      payloads: { true: 'plain text' },
    },
  },
  { ...base, id: 3, key: '42', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } },
  {
    ...base,
    id: 4,
    key: 'cycle-a',
    filters: {
      groups: [{ properties: [{ key: '5', type: 'flag', operator: 'flag_evaluates_to', value: true }] }],
    },
  },
  {
    ...base,
    id: 5,
    key: 'cycle-b',
    filters: {
      groups: [{ properties: [{ key: '4', type: 'flag', operator: 'flag_evaluates_to', value: true }] }],
    },
  },
  {
    ...base,
    id: 6,
    key: 'company',
    filters: { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 100 }] },
  },
];

/** The text with the per-request id and clock blanked, so two bodies compare byte for byte. */
const withoutRequest = (text: string) =>
  text.replace(/"requestId":"[0-9a-f-]{36}","evaluatedAt":\d+}$/, '"requestId":"x","evaluatedAt":0}');

describe('v2Json', () => {
  it('writes the same JSON as serializing v2Body, twice over the same compiled flags', () => {
    const compiled = new CompiledFlags(FLAGS);
    for (let person = 0; person < 40; person++) {
      const results = evaluateFlags(compiled, {
        distinctId: `person-${person}`,
        personProperties: { plan: person % 2 ? 'pro' : 'free' },
        groups: person % 3 ? { company: 'acme' } : {},
        groupTypeMapping: { 0: 'company' },
      });
      for (const errors of [false, true]) {
        expect(withoutRequest(v2Json(results, errors))).toBe(
          withoutRequest(JSON.stringify(v2Body(results, errors))),
        );
      }
    }
  });

  it('reports errorsWhileComputingFlags for a failed answer', () => {
    const results = evaluateFlags(new CompiledFlags(FLAGS), { distinctId: 'a' });
    expect(results['cycle-a'].failed).toBe(true);
    const parsed = JSON.parse(v2Json(results, false)) as { errorsWhileComputingFlags: boolean };
    expect(parsed.errorsWhileComputingFlags).toBe(true);
    expect(JSON.parse(v2Json({}, false))).toEqual(
      expect.objectContaining({ flags: {}, errorsWhileComputingFlags: false }),
    );
  });
});
