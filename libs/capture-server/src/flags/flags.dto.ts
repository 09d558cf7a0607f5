import { Type, type Static } from '@sinclair/typebox';
import type { CohortPropertyGroup } from '@hogbase/flag-evaluation';
import { encodedBody, UNAVAILABLE_RESPONSE, UNSUPPORTED_MEDIA_TYPE } from '../capture.dto';
import { ErrorBodySchema } from '../error-body.dto';
import {
  jsonWithHeaders,
  noContent,
  ref,
  stringEnum,
  type OperationDoc,
  type SecurityRequirement,
} from '../openapi/documented-route.util';
import { FlagsConfigFieldsSchema } from '../remote-config/remote-config.dto';

/** The flag endpoints' bodies; the document and the builders' types come from these schemas. */

const nullable = <Schema extends Parameters<typeof Type.Union>[0][number]>(schema: Schema) =>
  Type.Union([schema, Type.Null()]);

export const FlagsRequestSchema = Type.Object(
  {
    token: Type.String({
      description: 'The project API key (`phc_…`); `api_key` or `$token` are read as well.',
    }),
    distinct_id: Type.Union([Type.String(), Type.Number()], {
      description: 'Whom to evaluate for; `$distinct_id` is read as well.',
    }),
    groups: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
        description: 'Group type → group key.',
      }),
    ),
    person_properties: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Properties to evaluate with, over the stored ones.',
      }),
    ),
    group_properties: Type.Optional(
      Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()), {
        description: 'Group type → its properties.',
      }),
    ),
    $anon_distinct_id: Type.Optional(
      Type.String({ description: 'The anonymous id before identify: experience continuity.' }),
    ),
    $device_id: Type.Optional(Type.String({ description: 'For flags bucketed by device.' })),
    flag_keys_to_evaluate: Type.Optional(Type.Array(Type.String(), { description: 'Only these flags.' })),
  },
  {
    $id: 'FlagsRequest',
    description: 'What SDKs send to `/flags` and `/decide`.',
    examples: [
      { token: 'phc_your_project_api_key', distinct_id: 'user-1', person_properties: { plan: 'pro' } },
    ],
  },
);

export const FlagDetailSchema = Type.Object(
  {
    key: Type.String(),
    enabled: Type.Boolean(),
    variant: nullable(Type.String()),
    reason: Type.Object({
      code: Type.String({
        description: 'e.g. `condition_match`, `no_condition_match`, `out_of_rollout_bound`.',
      }),
      condition_index: nullable(Type.Integer()),
      description: Type.String(),
    }),
    metadata: Type.Object({
      id: Type.Integer(),
      version: Type.Integer(),
      description: nullable(Type.String()),
      payload: Type.Optional(
        Type.String({ description: "The payload of the flag's value, as stored: usually a JSON text." }),
      ),
      has_experiment: Type.Boolean(),
    }),
    failed: Type.Optional(
      Type.Literal(true, { description: 'Present when the flag could not be evaluated.' }),
    ),
  },
  { $id: 'FlagDetail', description: "One flag's answer (`/flags?v=2`)." },
);

export const FlagsV2Schema = Type.Object(
  {
    flags: Type.Record(Type.String(), Type.Unsafe<Static<typeof FlagDetailSchema>>(Type.Ref('FlagDetail')), {
      description: 'Flag key → its answer.',
    }),
    errorsWhileComputingFlags: Type.Boolean({
      description: 'Some answers may be wrong: a store could not be read, or a flag failed.',
    }),
    requestId: Type.String({ description: "The answer's id (a UUID)." }),
    evaluatedAt: Type.Integer({ description: 'When, in ms since the epoch.' }),
    ...FlagsConfigFieldsSchema.properties,
  },
  {
    $id: 'FlagsV2',
    description:
      'The answer of `/flags?v=2` and `/decide?v=4`; with `config=true`, or on `/decide`, the remote ' +
      'config fields too.',
  },
);

export const FlagsLegacySchema = Type.Object(
  {
    featureFlags: Type.Record(Type.String(), Type.Union([Type.String(), Type.Boolean()]), {
      description: 'Flag key → its value: the variant, else whether it is on.',
    }),
    featureFlagPayloads: Type.Record(Type.String(), Type.String(), {
      description: 'Flag key → the payload of its value (a JSON text), for flags that are on.',
    }),
    errorsWhileComputingFlags: Type.Boolean(),
    ...FlagsConfigFieldsSchema.properties,
  },
  {
    $id: 'FlagsLegacy',
    description:
      'The answer of `/flags` before v2 and `/decide` before v4; with `config=true`, or on `/decide`, the ' +
      'remote config fields too.',
  },
);

export type FlagsV2 = Static<typeof FlagsV2Schema>;
export type FlagsLegacy = Static<typeof FlagsLegacySchema>;

const FlagPropertySchema = Type.Object(
  {
    key: Type.String(),
    type: Type.Optional(nullable(stringEnum(['person', 'group', 'cohort', 'flag']))),
    operator: Type.Optional(nullable(Type.String())),
    value: Type.Optional(Type.Unknown()),
    negation: Type.Optional(nullable(Type.Boolean())),
    group_type_index: Type.Optional(nullable(Type.Integer())),
    dependency_chain: Type.Optional(
      Type.Array(Type.String(), {
        description: 'For a flag dependency: the flags to evaluate first, in order.',
      }),
    ),
  },
  { description: 'A property filter.' },
);

const FlagConditionSchema = Type.Object({
  properties: Type.Optional(nullable(Type.Array(FlagPropertySchema))),
  rollout_percentage: Type.Optional(nullable(Type.Number())),
  variant: Type.Optional(nullable(Type.String())),
  aggregation_group_type_index: Type.Optional(nullable(Type.Integer())),
});

export const LocalEvaluationFlagSchema = Type.Object(
  {
    id: Type.Integer(),
    team_id: Type.Optional(Type.Integer()),
    name: Type.String(),
    key: Type.String(),
    filters: Type.Object({
      groups: Type.Optional(nullable(Type.Array(FlagConditionSchema))),
      multivariate: Type.Optional(
        nullable(
          Type.Object({
            variants: Type.Array(
              Type.Object({
                key: Type.String(),
                name: Type.Optional(nullable(Type.String())),
                rollout_percentage: Type.Number(),
              }),
            ),
          }),
        ),
      ),
      payloads: Type.Optional(
        nullable(Type.Record(Type.String(), Type.Unknown(), { description: 'Value → its payload.' })),
      ),
      aggregation_group_type_index: Type.Optional(nullable(Type.Integer())),
      super_groups: Type.Optional(nullable(Type.Array(FlagConditionSchema))),
      feature_enrollment: Type.Optional(nullable(Type.Boolean())),
      holdout: Type.Optional(
        nullable(Type.Object({ id: Type.Integer(), exclusion_percentage: Type.Number() })),
      ),
    }),
    deleted: Type.Boolean(),
    active: Type.Boolean(),
    ensure_experience_continuity: Type.Boolean(),
    version: Type.Integer(),
    has_experiment: Type.Boolean(),
    bucketing_identifier: Type.Optional(stringEnum(['distinct_id', 'device_id'])),
  },
  { $id: 'LocalEvaluationFlag', description: 'A flag as SDKs evaluate it locally.' },
);

export const LocalEvaluationSchema = Type.Object(
  {
    flags: Type.Array(
      Type.Unsafe<Static<typeof LocalEvaluationFlagSchema>>(Type.Ref('LocalEvaluationFlag')),
      { description: 'Every flag not deleted, inactive ones too.' },
    ),
    group_type_mapping: Type.Record(Type.String(), Type.String(), {
      description: 'Group type index → group type name.',
    }),
    cohorts: Type.Record(
      Type.String(),
      // NOTE: a recursive tree (groups of groups and property filters); described one level deep.
      Type.Unsafe<CohortPropertyGroup>(
        Type.Object({
          type: Type.String({ description: '`AND` or `OR`.' }),
          values: Type.Array(Type.Record(Type.String(), Type.Unknown())),
        }),
      ),
      { description: 'With `send_cohorts`: cohort id → its property groups, for the cohorts the flags use.' },
    ),
  },
  { $id: 'LocalEvaluationDefinitions', description: 'The definitions SDKs poll for local evaluation.' },
);

const FLAG_TAGS = ['flags'] as const;

const FlagsQuerySchema = Type.Object({
  v: Type.Optional(
    Type.String({
      description:
        'The answer shape: from `2` on `/flags` (from `4` on `/decide`) `FlagsV2`, below it `FlagsLegacy`.',
    }),
  ),
  config: Type.Optional(
    Type.String({ description: '`true`: the remote config fields too (always on `/decide`).' }),
  ),
  compression: Type.Optional(
    Type.String({ description: 'How the body is encoded: `gzip-js`, `gzip`, `lz64` or `base64`.' }),
  ),
  data: Type.Optional(Type.String({ description: 'The body, when sent in the query (GET).' })),
  ver: Type.Optional(Type.String({ description: "The SDK's version; not read." })),
});

const FLAGS_ANSWER = Type.Union(
  [Type.Unsafe<FlagsV2>(Type.Ref('FlagsV2')), Type.Unsafe<FlagsLegacy>(Type.Ref('FlagsLegacy'))],
  {
    description:
      'The flags (the shape by `v`). When the flags could not be read, none, with `errorsWhileComputingFlags`.',
  },
);

const REMOTE_FLAG_RESPONSES = {
  200: FLAGS_ANSWER,
  400: ref(
    ErrorBodySchema,
    'The body cannot be decoded, is not a JSON object (`invalid_payload`), or has no distinct id ' +
      '(`missing_distinct_id`).',
  ),
  401: ref(ErrorBodySchema, 'No project API key, or none a project has (`invalid_api_key`).'),
  413: ref(ErrorBodySchema, 'The body or its decoded payload is too large.'),
  503: UNAVAILABLE_RESPONSE,
};

/** `/flags` and `/decide`, by method. */
export function remoteFlagsOperation(path: 'flags' | 'decide', method: 'GET' | 'POST') {
  const legacy = path === 'decide';
  const post = method === 'POST';
  return {
    operationId: `${path}_${post ? 'create' : 'retrieve'}`,
    summary: legacy
      ? "Evaluate a person's flags, with the remote config (older SDKs)"
      : "Evaluate a person's flags",
    description:
      (post
        ? 'The body may be JSON, a form with `data=`, text or gzip, as on the event paths. '
        : 'The body is in `?data=`. ') +
      'Person properties stored by ingestion are read, those sent win. A store that cannot be read ' +
      'degrades the answer (`errorsWhileComputingFlags`) rather than failing it.',
    tags: FLAG_TAGS,
    deprecated: legacy,
    querystring: FlagsQuerySchema,
    ...(post ? { body: encodedBody(ref(FlagsRequestSchema)) } : {}),
    response: post ? { ...REMOTE_FLAG_RESPONSES, 415: UNSUPPORTED_MEDIA_TYPE } : REMOTE_FLAG_RESPONSES,
  } satisfies OperationDoc;
}

const DEFINITIONS_SECURITY: readonly SecurityRequirement[] = [
  { PersonalAPIKey: [] },
  { ProjectSecretAPIKey: [] },
];

/** The two paths SDKs poll for local evaluation. */
export function definitionsOperation(path: '/flags/definitions' | '/api/feature_flag/local_evaluation') {
  const ETAG = Type.String({
    description: 'The version of the definitions; send it back in `If-None-Match`.',
  });
  return {
    operationId:
      path === '/flags/definitions' ? 'flags_definitions_retrieve' : 'feature_flag_local_evaluation_retrieve',
    summary: 'The flag definitions, for local evaluation',
    description:
      'Needs `Authorization: Bearer` with a personal API key (`phx_…`, scope `feature_flag:read`, a member ' +
      "of the project's organization) or the project's secret API key (`phs_…`). The project is named by " +
      '`?token=`, `?api_key=` or the `X-PostHog-Project-Api-Key` header (the query wins); a secret key ' +
      'needs none.',
    tags: FLAG_TAGS,
    security: DEFINITIONS_SECURITY,
    querystring: Type.Object({
      token: Type.Optional(Type.String({ description: 'The project API key (`phc_…`).' })),
      api_key: Type.Optional(Type.String({ description: 'The same, as PostHog also reads it.' })),
      send_cohorts: Type.Optional(
        Type.String({ description: 'Present (any value, even none): the cohorts the flags use too.' }),
      ),
    }),
    headers: Type.Object({
      'x-posthog-project-api-key': Type.Optional(
        Type.String({ description: 'The project API key, when not in the query (posthog-rs).' }),
      ),
      'if-none-match': Type.Optional(Type.String({ description: 'An ETag of an earlier answer.' })),
    }),
    response: {
      200: jsonWithHeaders('The definitions.', ref(LocalEvaluationSchema), {
        etag: ETAG,
        'cache-control': Type.String(),
      }),
      304: noContent('Unchanged since the ETag sent in `If-None-Match`.', { etag: ETAG }),
      400: ref(ErrorBodySchema, 'No project API key, and the key in `Authorization` is not a secret key.'),
      401: jsonWithHeaders(
        'No key in `Authorization` (`not_authenticated`, with `WWW-Authenticate`), or a key or project API key ' +
          'nobody has.',
        ref(ErrorBodySchema),
        { 'www-authenticate': Type.String({ description: '`Bearer`' }) },
      ),
      403: ref(
        ErrorBodySchema,
        "The key lacks the scope `feature_flag:read`, or its user is not a member of the project's organization.",
      ),
      503: UNAVAILABLE_RESPONSE,
    },
  } satisfies OperationDoc;
}

export const FLAGS_PREFLIGHT_BODY = Type.Object({}, { description: 'An empty object.' });
