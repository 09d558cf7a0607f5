import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { BROWSER_ROUTE } from './cors';

/** PostHog's limit on a recordings request (rust/capture, recordings mode). */
const RECORDINGS_BODY_LIMIT = 25 * 1024 * 1024;

/**
 * What PostHog's capture answers a project over its recordings quota: 200, with `quota_limited`.
 * posthog-js reads it from any response and stops sending snapshots for a minute, then tries again.
 */
const RECORDINGS_REFUSED = { status: 1, quota_limited: ['recordings'] };

/**
 * `/s/`, where posthog-js sends session recording snapshots. This server keeps no recordings, and
 * every remote config it serves says `sessionRecording: false`, so posthog-js does not record; an
 * SDK that records anyway (configured locally, or an older config) is answered as a PostHog without
 * recordings quota answers it: 200 with `quota_limited: ["recordings"]`. The snapshots are dropped
 * unread and never reach the queue. An error would make the SDK retry the same snapshots forever.
 *
 * The body is drained as it arrives, never buffered: a recording batch can be megabytes.
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
    scope.route({
      method: ['GET', 'POST'],
      url: '/s',
      config: BROWSER_ROUTE,
      handler: async (_request, reply) => reply.code(200).send(RECORDINGS_REFUSED),
    });
    scope.options('/s', { config: BROWSER_ROUTE }, async (_request, reply) =>
      reply.code(200).send({ status: 1 }),
    );
    registered();
  });
}
