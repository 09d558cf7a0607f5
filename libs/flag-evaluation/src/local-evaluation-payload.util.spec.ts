import type { CohortDefinition, FlagDefinition } from './flag-definition.types';
import { buildLocalEvaluationPayload } from './local-evaluation-payload.util';

/**
 * The shape posthog-node reads from `/flags/definitions?token=…&send_cohorts`
 * (packages/node/src/extensions/feature-flags/feature-flags.ts `_loadFeatureFlags`): `flags`,
 * `group_type_mapping`, `cohorts`. posthog-node-parity.spec.ts feeds this payload to the SDK.
 */
describe('buildLocalEvaluationPayload', () => {
  const cohorts: CohortDefinition[] = [
    {
      id: 1,
      properties: {
        type: 'OR',
        values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', operator: 'in', value: 2 }] }],
      },
    },
    {
      id: 2,
      properties: { type: 'AND', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro' }] }] },
    },
    { id: 3, is_static: true },
    { id: 4, properties: { type: 'AND', values: [] } },
  ];
  const flags: FlagDefinition[] = [
    {
      id: 10,
      key: 'in-cohorts',
      name: 'Uses cohorts',
      active: true,
      deleted: false,
      version: 4,
      filters: {
        groups: [
          {
            properties: [
              { key: 'id', type: 'cohort', value: 1 },
              { key: 'id', type: 'cohort', value: 3 },
            ],
          },
        ],
      },
    },
    { id: 11, key: 'off', active: false, deleted: false, filters: { groups: [] } },
    { id: 12, key: 'gone', active: true, deleted: true, filters: { groups: [] } },
    {
      id: 13,
      key: 'needs-off-and-cohorts',
      active: true,
      deleted: false,
      ensure_experience_continuity: true,
      bucketing_identifier: 'device_id',
      filters: {
        groups: [
          {
            properties: [
              { key: '10', type: 'flag', operator: 'flag_evaluates_to', value: true },
              { key: '99', type: 'flag', operator: 'flag_evaluates_to', value: false },
            ],
          },
        ],
      },
    },
    {
      id: 14,
      key: 'needs-13',
      active: true,
      deleted: false,
      filters: {
        groups: [{ properties: [{ key: '13', type: 'flag', operator: 'flag_evaluates_to', value: true }] }],
      },
    },
  ];
  const payload = buildLocalEvaluationPayload({ flags, groupTypeMapping: { '0': 'company' }, cohorts });

  it('lists every non-deleted flag with the fields SDKs read', () => {
    expect(payload.flags.map((flag) => flag.key)).toEqual([
      'in-cohorts',
      'off',
      'needs-off-and-cohorts',
      'needs-13',
    ]);
    expect(payload.flags[0]).toEqual({
      id: 10,
      name: 'Uses cohorts',
      key: 'in-cohorts',
      filters: flags[0].filters,
      deleted: false,
      active: true,
      ensure_experience_continuity: false,
      version: 4,
      has_experiment: false,
    });
    expect(payload.flags[2]).toMatchObject({
      ensure_experience_continuity: true,
      bucketing_identifier: 'device_id',
    });
    expect(payload.group_type_mapping).toEqual({ '0': 'company' });
  });

  it('sends the dynamic cohorts flags use, nested ones included, and never static ones', () => {
    expect(payload.cohorts).toEqual({ '1': cohorts[0].properties, '2': cohorts[1].properties });
  });

  it('names flag dependencies by key with the chain to evaluate first', () => {
    expect(payload.flags[3].filters.groups?.[0].properties).toEqual([
      {
        key: 'needs-off-and-cohorts',
        type: 'flag',
        operator: 'flag_evaluates_to',
        value: true,
        dependency_chain: ['in-cohorts', 'needs-off-and-cohorts'],
      },
    ]);
    // A dependency that does not exist keeps its id, so SDKs see it is missing.
    expect(payload.flags[2].filters.groups?.[0].properties?.[1]).toMatchObject({
      key: '99',
      dependency_chain: ['99'],
    });
  });

  it('gives a dependency cycle an empty chain, which SDKs refuse to evaluate', () => {
    const cyclic = buildLocalEvaluationPayload({
      flags: [
        {
          ...flags[4],
          id: 30,
          filters: {
            groups: [
              { properties: [{ key: '31', type: 'flag', operator: 'flag_evaluates_to', value: true }] },
            ],
          },
        },
        {
          ...flags[4],
          id: 31,
          key: 'other',
          filters: {
            groups: [
              { properties: [{ key: '30', type: 'flag', operator: 'flag_evaluates_to', value: true }] },
            ],
          },
        },
      ],
      groupTypeMapping: {},
    });
    expect(cyclic.flags[0].filters.groups?.[0].properties?.[0]).toMatchObject({
      key: 'other',
      dependency_chain: [],
    });
  });

  it('is plain JSON', () => {
    expect(JSON.parse(JSON.stringify(payload))).toEqual(payload);
  });
});
