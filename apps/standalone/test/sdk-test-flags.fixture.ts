/** Evaluated both locally and through `/flags?v=2` by the SDK suites. */
export const SDK_TEST_FLAGS: Record<string, unknown>[] = [
  {
    key: 'half-rollout',
    filters: { groups: [{ properties: [], rollout_percentage: 50 }], payloads: { true: '{"discount": 10}' } },
  },
  {
    key: 'checkout-experiment',
    filters: {
      groups: [{ properties: [], rollout_percentage: 80 }],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 34 },
          { key: 'one-page', rollout_percentage: 33 },
          { key: 'express', rollout_percentage: 33 },
        ],
      },
      payloads: { control: '{"steps": 3}', 'one-page': '{"steps": 1}', express: '"fast"' },
    },
  },
  {
    key: 'pro-users',
    filters: {
      groups: [
        {
          properties: [{ key: 'plan', value: ['pro', 'enterprise'], operator: 'exact', type: 'person' }],
          rollout_percentage: 100,
        },
        {
          properties: [{ key: 'email', value: '@acme.com', operator: 'icontains', type: 'person' }],
          rollout_percentage: 30,
        },
      ],
    },
  },
  {
    key: 'big-companies',
    filters: {
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [
            { key: 'employees', value: '100', operator: 'gte', type: 'group', group_type_index: 0 },
          ],
          rollout_percentage: 70,
        },
      ],
    },
  },
  {
    key: 'beta-by-age',
    filters: {
      groups: [
        {
          properties: [{ key: 'age', value: '30', operator: 'lt', type: 'person' }],
          rollout_percentage: 60,
          variant: null,
        },
      ],
    },
  },
];

export interface SdkTestPerson {
  distinctId: string;
  personProperties: { plan: string; email: string; age: number };
  groups: { company: string };
  groupProperties: { company: { employees: number } };
}

/** Seeded: the same run every time, and a failure names the person. */
export function sdkTestPeople(count: number, seed: number, prefix: string): SdkTestPerson[] {
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const plans = ['free', 'pro', 'enterprise', 'team'];
  return Array.from({ length: count }, (_, index) => ({
    distinctId: `${prefix}-${seed}-${index}`,
    personProperties: {
      plan: plans[Math.floor(next() * plans.length)],
      email: next() < 0.3 ? `user${index}@acme.com` : `user${index}@example.org`,
      age: Math.floor(next() * 60) + 15,
    },
    groups: { company: `company-${Math.floor(next() * 50)}` },
    groupProperties: { company: { employees: Math.floor(next() * 400) } },
  }));
}
