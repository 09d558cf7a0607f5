import { Type } from '@sinclair/typebox';
import { RETRY_AFTER_HEADER } from './capture.dto';
import { ErrorBodySchema } from './error-body.dto';
import {
  jsonWithHeaders,
  ref,
  type OperationDoc,
  type SecurityRequirement,
} from './openapi/documented-route.util';

/** `/_health`, `/_ready` and `/metrics` on the capture host, as @hogbase/service-runtime answers them. */

const checks = Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.String()]), {
  description: 'What was checked: true, false, or why it failed.',
});

export const HealthSchema = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'Health', description: 'The process answers.' },
);

export const ReadySchema = Type.Object(
  { status: Type.Literal('ok'), checks },
  { $id: 'Ready', description: 'Ready to take events.' },
);

export const NotReadySchema = Type.Object(
  {
    type: Type.Literal('server_error'),
    code: Type.Literal('service_unavailable'),
    detail: Type.String({ description: 'The failing checks.' }),
    attr: Type.Null(),
    checks,
  },
  { $id: 'NotReady', description: 'Not ready: the error body, with the checks.' },
);

const PROBE_TAGS = ['probes'] as const;

export const HEALTH_OPERATION = {
  operationId: 'health_retrieve',
  summary: 'Liveness',
  tags: PROBE_TAGS,
  response: { 200: ref(HealthSchema, 'The process answers.') },
} satisfies OperationDoc;

const NO_STORE = { 'cache-control': Type.String({ description: '`no-store`' }) };

export const READY_OPERATION = {
  operationId: 'ready_retrieve',
  summary: 'Readiness',
  description:
    'Ready once the queue takes events and the projects’ tokens were loaded; Postgres is reported but does ' +
    'not count afterwards (known tokens are served from memory).',
  tags: PROBE_TAGS,
  response: {
    200: jsonWithHeaders('Ready.', ref(ReadySchema), NO_STORE),
    503: jsonWithHeaders('Not ready.', ref(NotReadySchema), { ...NO_STORE, ...RETRY_AFTER_HEADER }),
  },
} satisfies OperationDoc;

const METRICS_SECURITY: readonly SecurityRequirement[] = [{}, { MetricsToken: [] }];

export const METRICS_OPERATION = {
  operationId: 'metrics_retrieve',
  summary: 'Prometheus metrics',
  description:
    'Open to all unless `METRICS_TOKEN` is set; then it needs `Authorization: Bearer <METRICS_TOKEN>`.',
  tags: PROBE_TAGS,
  security: METRICS_SECURITY,
  response: {
    200: {
      description: 'The metrics, in the Prometheus text format.',
      content: { 'text/plain': { schema: Type.String() } },
    },
    401: jsonWithHeaders(
      '`METRICS_TOKEN` is set and the request has no token (`not_authenticated`) or another one ' +
        '(`authentication_failed`).',
      ref(ErrorBodySchema),
      { 'www-authenticate': Type.String({ description: '`Bearer`' }) },
    ),
  },
} satisfies OperationDoc;
