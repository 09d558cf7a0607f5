import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBodySchema, RETRY_AFTER_SECONDS } from './error-body.dto';
import {
  jsonWithHeaders,
  noContent,
  ref,
  type OperationDoc,
  type RequestBodyDoc,
} from './openapi/documented-route.util';

/**
 * The event bodies the capture host takes and its answers. An event that lacks a required field is
 * dropped; the request still answers 200.
 */

const properties = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Event properties (free-form). Special ones: `$set`, `$set_once`, `$groups`, `$process_person_profile`, ' +
    '`$current_url`, `$screen_name`, … (see the Events part of the spec); `distinct_id` and `token` may be here.',
});

const timestamp = Type.String({
  description: 'When the event happened (ISO 8601); the time of receipt when absent.',
});

const distinctId = Type.Union([Type.String(), Type.Number()], {
  description: 'Who did it; `$distinct_id` or `properties.distinct_id` are read as well.',
});

export const CaptureEventSchema = Type.Object(
  {
    api_key: Type.String({
      description: 'The project API key (`phc_…`); `token`, `$token` or `properties.token` are read as well.',
    }),
    event: Type.String({
      description: 'The event name; `$…` names are reserved (`$identify`, `$pageview`, …).',
    }),
    distinct_id: distinctId,
    properties: Type.Optional(properties),
    timestamp: Type.Optional(timestamp),
    uuid: Type.Optional(Type.String({ description: "The event's UUID; one is made when absent." })),
  },
  {
    $id: 'CaptureEvent',
    description: 'One event (`/capture/`).',
    examples: [
      {
        api_key: 'phc_your_project_api_key',
        event: '$pageview',
        distinct_id: 'user-1',
        properties: { $current_url: 'https://example.com/' },
        timestamp: '2026-01-01T12:00:00.000Z',
      },
    ],
  },
);

export const CaptureBatchEventSchema = Type.Object(
  {
    event: Type.String({ description: 'The event name.' }),
    distinct_id: Type.Optional(distinctId),
    properties: Type.Optional(properties),
    timestamp: Type.Optional(timestamp),
    uuid: Type.Optional(Type.String()),
  },
  { $id: 'CaptureBatchEvent', description: 'One event of a batch; `distinct_id` may be in `properties`.' },
);

export const CaptureBatchSchema = Type.Object(
  {
    api_key: Type.String({ description: 'The project API key (`phc_…`); `token` is read as well.' }),
    historical_migration: Type.Optional(
      Type.Boolean({
        description:
          'True when importing past data: the events are processed in order, without spike detection.',
      }),
    ),
    sent_at: Type.Optional(
      Type.String({ description: 'When the client sent the batch (ISO 8601), to correct its clock.' }),
    ),
    batch: Type.Array(Type.Unsafe<Static<typeof CaptureBatchEventSchema>>(Type.Ref('CaptureBatchEvent'))),
  },
  {
    $id: 'CaptureBatch',
    description: 'Many events (`/batch/`); no limit on their number.',
    examples: [
      {
        api_key: 'phc_your_project_api_key',
        batch: [
          { event: 'signed up', distinct_id: 'user-1', properties: { plan: 'free' } },
          { event: '$identify', properties: { distinct_id: 'user-1', $set: { email: 'a@example.com' } } },
        ],
      },
    ],
  },
);

export const EncodedPayloadFormSchema = Type.Object(
  {
    data: Type.String({
      description: 'The payload: JSON, base64 of JSON or of gzip, or lz-string base64 (`compression=lz64`).',
    }),
    compression: Type.Optional(
      Type.String({ description: '`gzip-js`, `gzip`, `lz64` or `base64`; otherwise read from the bytes.' }),
    ),
    ver: Type.Optional(Type.String({ description: "The SDK's version; not read." })),
  },
  {
    $id: 'EncodedPayloadForm',
    description: 'A form body, as posthog-js sends it (`application/x-www-form-urlencoded`).',
  },
);

export const CaptureAcceptedSchema = Type.Object(
  { status: Type.Literal(1) },
  { $id: 'CaptureAccepted', description: 'Taken: every event kept is acknowledged by the queue.' },
);

export type CaptureAccepted = Static<typeof CaptureAcceptedSchema>;

/** What every 503 of the capture host carries. */
export const RETRY_AFTER_HEADER = {
  'retry-after': Type.Integer({
    description: `Seconds to wait before trying again (${RETRY_AFTER_SECONDS}).`,
  }),
};

export const UNAVAILABLE_RESPONSE = jsonWithHeaders(
  'Something the answer depends on (the queue, or Postgres for a token not seen yet) is down: retry later.',
  ref(ErrorBodySchema),
  RETRY_AFTER_HEADER,
);

/** The query parameters of the event paths, as the SDKs send them. */
const EventQuerySchema = (dataRequired: boolean) => {
  const data = Type.String({
    description:
      'The payload, when not in the body (the legacy `GET ?data=`): JSON, base64 of JSON or of gzip, ' +
      'or lz-string base64.',
  });
  return Type.Object({
    data: dataRequired ? data : Type.Optional(data),
    compression: Type.Optional(
      Type.String({
        description:
          'How the payload is encoded: `gzip-js` or `gzip`, `lz64`, `base64`; anything else, or none, is ' +
          'read from the bytes.',
      }),
    ),
    ver: Type.Optional(Type.String({ description: "The SDK's version (posthog-js); not read." })),
    _: Type.Optional(
      Type.String({
        description: "The client's clock in ms since the epoch: when the body has no `sent_at`, corrects it.",
      }),
    ),
    beacon: Type.Optional(
      Type.String({ description: '`1`: answer 204 without a body (`navigator.sendBeacon`).' }),
    ),
  });
};

const EventHeadersSchema = Type.Object({
  'content-encoding': Type.Optional(Type.String({ description: '`gzip`: the body is gzip.' })),
});

/** The bodies by media type, with `json` the JSON shapes the path takes. */
export function encodedBody(json: TSchema): RequestBodyDoc {
  return {
    content: {
      'application/json': { schema: json },
      'application/x-www-form-urlencoded': { schema: ref(EncodedPayloadFormSchema) },
      'text/plain': {
        schema: Type.String({
          description:
            'JSON, base64 or lz-string text (posthog-js), or gzip bytes with `?compression=gzip-js`.',
        }),
      },
      'application/octet-stream': {
        schema: Type.String({
          format: 'binary',
          description: 'gzip (`Content-Encoding: gzip` or `?compression=gzip-js`) of the JSON payload.',
        }),
      },
    },
  };
}

const ACCEPTED = ref(
  CaptureAcceptedSchema,
  'Taken: every event kept was acknowledged by the queue. Events without a name or a distinct id are ' +
    'dropped (counted), the rest are kept.',
);
const BEACON = noContent('Taken, with `?beacon=1`: no body.');
const BAD_PAYLOAD = ref(
  ErrorBodySchema,
  'The payload cannot be decoded or parsed into events (`invalid_payload`), or holds none (`no_data`).',
);
const BAD_KEY = ref(
  ErrorBodySchema,
  'No project API key (`missing_api_key`), or none a project has, or events with different keys ' +
    '(`invalid_api_key`).',
);
const TOO_LARGE = ref(
  ErrorBodySchema,
  'The body, the decoded payload (`payload_too_large`) or one of its events (`event_too_large`) is too ' +
    'large: nothing of the request is kept.',
);
export const UNSUPPORTED_MEDIA_TYPE = ref(ErrorBodySchema, 'The `Content-Type` header cannot be read.');

export const EVENT_GET_RESPONSES = {
  200: ACCEPTED,
  204: BEACON,
  400: BAD_PAYLOAD,
  401: BAD_KEY,
  413: TOO_LARGE,
  503: UNAVAILABLE_RESPONSE,
};

export const EVENT_POST_RESPONSES = { ...EVENT_GET_RESPONSES, 415: UNSUPPORTED_MEDIA_TYPE };

/** The public shape for `/capture/` and `/batch/`, any of them for the SDKs' paths. */
export function eventJson(url: string): TSchema {
  if (url === '/capture/') return ref(CaptureEventSchema);
  if (url === '/batch/') return ref(CaptureBatchSchema);
  return Type.Union([
    ref(CaptureEventSchema),
    ref(CaptureBatchSchema),
    Type.Array(ref(CaptureBatchEventSchema), {
      description: 'Events, each with its key (`api_key`, `token` or `properties.token`).',
    }),
  ]);
}

/** `/batch/` → `batch`, `/i/v0/e/` → `i_v0_e`: the stem of a path's operation ids. */
function operationStem(url: string): string {
  return url.replace(/^\/|\/$/g, '').replaceAll('/', '_');
}

const EVENT_TAGS = ['capture'] as const;

export function eventPostOperation(url: string, summary: string) {
  return {
    operationId: `${operationStem(url)}_create`,
    summary,
    description:
      'The body may be JSON, a form with `data=`, text, or gzip (`Content-Encoding: gzip` or ' +
      '`?compression=gzip-js`); base64 and lz-string payloads are decoded. The project API key is in the ' +
      'body, no header credential is needed.',
    tags: EVENT_TAGS,
    querystring: EventQuerySchema(false),
    headers: EventHeadersSchema,
    body: encodedBody(eventJson(url)),
    response: EVENT_POST_RESPONSES,
  } satisfies OperationDoc;
}

export function eventGetOperation(url: string, summary: string) {
  return {
    operationId: `${operationStem(url)}_retrieve`,
    summary,
    description: "The SDKs' legacy form: the payload in `?data=` (as the body of a POST would be).",
    tags: EVENT_TAGS,
    querystring: EventQuerySchema(true),
    response: EVENT_GET_RESPONSES,
  } satisfies OperationDoc;
}

/** A CORS preflight of a browser path: always 200. */
export function preflightOperation<Schema extends TSchema>(url: string, body: Schema) {
  return {
    operationId: `${operationStem(url)}_preflight`,
    summary: `CORS preflight of ${url}`,
    description:
      "Answers the browser's preflight: the request's origin and headers mirrored, credentials allowed.",
    tags: ['cors'],
    response: { 200: body },
  } satisfies OperationDoc;
}
