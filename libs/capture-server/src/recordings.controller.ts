import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { CaptureAcceptedSchema, preflightOperation, UNSUPPORTED_MEDIA_TYPE } from './capture.dto';
import { ErrorBodySchema } from './error-body.dto';
import { documentedRoute, ref, type OperationDoc } from './openapi/documented-route.util';

/** PostHog's limit on a recordings request (rust/capture, recordings mode). */
const RECORDINGS_BODY_LIMIT = 25 * 1024 * 1024;

/** What PostHog's capture answers a project over its recordings quota. */
export const RecordingsRefusedSchema = Type.Object(
  {
    status: Type.Literal(1),
    quota_limited: Type.Array(Type.Literal('recordings'), {
      description: 'posthog-js stops sending snapshots for a minute.',
    }),
  },
  { $id: 'RecordingsRefused', description: 'Taken and dropped: this server keeps no recordings.' },
);

const RECORDINGS_REFUSED: Static<typeof RecordingsRefusedSchema> = {
  status: 1,
  quota_limited: ['recordings'],
};

const RECORDINGS = {
  summary: 'Session recording snapshots (dropped)',
  description:
    'Where posthog-js sends session recording snapshots. No recordings are kept: the body is read and ' +
    'dropped, and the answer says the project is over its recordings quota, as PostHog answers it.',
  tags: ['capture'],
};
const DROPPED = ref(RecordingsRefusedSchema, 'Dropped, unread.');

const RECORDINGS_OPERATIONS = {
  GET: { ...RECORDINGS, operationId: 's_retrieve', response: { 200: DROPPED } },
  POST: {
    ...RECORDINGS,
    operationId: 's_create',
    body: {
      content: {
        'application/json': { schema: Type.Unknown({ description: 'Snapshots; not read.' }) },
        'text/plain': { schema: Type.String({ description: 'Snapshots; not read.' }) },
        'application/octet-stream': { schema: Type.String({ format: 'binary', description: 'Not read.' }) },
      },
    },
    response: {
      200: DROPPED,
      413: ref(ErrorBodySchema, 'The body is larger than 25 MiB.'),
      415: UNSUPPORTED_MEDIA_TYPE,
    },
  },
} satisfies Record<string, OperationDoc>;

/**
 * `/s/`: no recordings are kept, so an SDK that records anyway is answered as over its quota (an
 * error would make it retry the same snapshots forever). The body is drained unread, never buffered.
 */
export function registerRecordingsRoutes(app: FastifyInstance): void {
  void app.register((scope, _options, registered) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload: IncomingMessage, done) => {
      let received = 0;
      let failed = false;
      payload.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > RECORDINGS_BODY_LIMIT && !failed) {
          failed = true;
          done(Object.assign(new Error('Request body is too large.'), { statusCode: 413 }), undefined);
        }
      });
      payload.on('end', () => {
        if (!failed) done(null, undefined);
      });
      payload.on('error', (error) => {
        if (!failed) done(error, undefined);
      });
    });
    for (const method of ['GET', 'POST'] as const) {
      documentedRoute(scope, {
        method,
        url: '/s/',
        doc: RECORDINGS_OPERATIONS[method],
        browser: true,
        handler: async (_request, reply) => reply.code(200).send(RECORDINGS_REFUSED),
      });
    }
    documentedRoute(scope, {
      method: 'OPTIONS',
      url: '/s/',
      doc: preflightOperation('/s/', ref(CaptureAcceptedSchema, 'Always.')),
      browser: true,
      handler: async (_request, reply) => reply.code(200).send({ status: 1 }),
    });
    registered();
  });
}
