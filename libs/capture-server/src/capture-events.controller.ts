import type { FastifyInstance } from 'fastify';
import {
  CaptureError,
  decodePayload,
  normalizeBatch,
  parseBatch,
  toQueueMessages,
  type QueryParams,
} from '@hogbase/capture-core';
import { EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { MessageTooLargeError, QueueUnavailableError, type EventPublisher } from '@hogbase/queue';
import type { CaptureMetrics } from './capture-metrics.util';
import {
  CaptureAcceptedSchema,
  eventGetOperation,
  eventPostOperation,
  preflightOperation,
} from './capture.dto';
import { errorBody, SERVICE_UNAVAILABLE } from './error-body.dto';
import {
  documentedRoute,
  ref,
  type DocumentedReply,
  type DocumentedRequest,
} from './openapi/documented-route.util';
import { TokenLookupUnavailableError } from './capture.errors';
import type { ProjectTokens } from './project-token.cache';

export interface CaptureEventsOptions {
  publisher: EventPublisher;
  tokens: ProjectTokens;
  metrics: CaptureMetrics;
  batchBodyLimit: number;
  eventBodyLimit: number;
  maxDecodedBytes: number;
  maxEventBytes?: number;
}

/**
 * Every path SDKs post events to. The SDKs' own paths also take a legacy `GET ?data=`; `/capture/`
 * and `/batch/` are POST-only.
 */
const EVENT_PATHS: readonly CapturePath[] = [
  { url: '/e/', methods: ['GET', 'POST'], summary: 'Capture events (posthog-js)' },
  {
    url: '/i/v0/e/',
    methods: ['GET', 'POST'],
    summary: 'Capture events (posthog-js, after the remote config)',
  },
  { url: '/capture/', methods: ['POST'], summary: 'Capture one event' },
  { url: '/track/', methods: ['GET', 'POST'], summary: 'Capture events (legacy SDKs)' },
  { url: '/engage/', methods: ['GET', 'POST'], summary: 'Capture events (legacy SDKs)' },
];
const BATCH_PATHS: readonly CapturePath[] = [
  { url: '/batch/', methods: ['POST'], summary: 'Capture many events' },
];

interface CapturePath {
  url: string;
  methods: readonly ('GET' | 'POST')[];
  summary: string;
}

type EventOperation = ReturnType<typeof eventPostOperation> | ReturnType<typeof eventGetOperation>;

const ACCEPTED = { status: 1 } as const;

/**
 * 200 only once the queue acknowledged every accepted event. An event without a name or distinct id
 * is dropped (counted), never the batch.
 */
export function registerCaptureEventRoutes(scope: FastifyInstance, options: CaptureEventsOptions): void {
  const handle =
    (bodyLimit: number) =>
    async (request: DocumentedRequest<EventOperation>, reply: DocumentedReply<EventOperation>) => {
      const stop = options.metrics.requests.startTimer();
      const status = await captureRequest(request, reply, bodyLimit, options);
      stop({ status: String(status) });
    };

  for (const [paths, bodyLimit] of [
    [EVENT_PATHS, options.eventBodyLimit],
    [BATCH_PATHS, options.batchBodyLimit],
  ] as const) {
    for (const { url, methods, summary } of paths) {
      for (const method of methods) {
        documentedRoute(scope, {
          method,
          url,
          doc: method === 'GET' ? eventGetOperation(url, summary) : eventPostOperation(url, summary),
          browser: true,
          bodyLimit,
          handler: handle(bodyLimit),
        });
      }
      documentedRoute(scope, {
        method: 'OPTIONS',
        url,
        doc: preflightOperation(url, ref(CaptureAcceptedSchema, 'Always.')),
        browser: true,
        handler: async (_request, reply) => reply.code(200).send(ACCEPTED),
      });
    }
  }
}

/** Returns the status for the request metric. */
async function captureRequest(
  request: DocumentedRequest<EventOperation>,
  reply: DocumentedReply<EventOperation>,
  bodyLimit: number,
  options: CaptureEventsOptions,
): Promise<number> {
  const query = request.query as QueryParams;
  try {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    if (body.length > bodyLimit) {
      void reply
        .code(413)
        .send(errorBody('validation_error', 'payload_too_large', 'Request body is too large.'));
      return 413;
    }
    const payload = decodePayload(
      {
        body,
        contentType: request.headers['content-type'],
        contentEncoding: request.headers['content-encoding'],
        query,
      },
      { maxDecodedBytes: options.maxDecodedBytes },
    );
    const batch = parseBatch(payload, query);
    const teamId = await options.tokens.resolve(batch.token);
    if (teamId === null) {
      void reply
        .code(401)
        .send(
          errorBody(
            'authentication_error',
            'invalid_api_key',
            'Project API key invalid. You can find your project API key in your project settings.',
          ),
        );
      return 401;
    }
    const { accepted, dropped } = normalizeBatch(batch, {
      teamId,
      ip: request.ip ?? null,
      now: new Date(),
      maxEventBytes: options.maxEventBytes,
    });
    // Before the drops are counted: an event too large refuses the whole request.
    const messages = toQueueMessages(accepted, options.maxEventBytes);
    for (const event of dropped) options.metrics.events.inc({ outcome: event.reason });
    if (dropped.length > 0) {
      request.log.info({ dropped: dropped.slice(0, 10), teamId }, 'events dropped');
    }
    if (messages.length > 0) {
      await options.publisher.publish(
        batch.historicalMigration ? HISTORICAL_EVENTS_TOPIC : EVENTS_TOPIC,
        messages,
      );
      options.metrics.events.inc({ outcome: 'accepted' }, accepted.length);
    }
    if (firstValue(query.beacon) === '1') {
      void reply.code(204).send();
      return 204;
    }
    void reply.code(200).send(ACCEPTED);
    return 200;
  } catch (failure) {
    if (failure instanceof CaptureError) {
      void reply.code(failure.status).send(failure.toBody());
      return failure.status;
    }
    if (failure instanceof QueueUnavailableError || failure instanceof TokenLookupUnavailableError) {
      // At debug: the publisher and the token cache each log the outage once.
      request.log.debug({ err: failure }, 'capture unavailable');
      void reply.code(503).send(SERVICE_UNAVAILABLE);
      return 503;
    }
    if (failure instanceof MessageTooLargeError) {
      void reply.code(413).send(errorBody('validation_error', 'event_too_large', failure.message));
      return 413;
    }
    throw failure;
  }
}

function firstValue(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}
