import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createEgressFetch, EgressPolicy } from '@hogbase/egress';
import { NonRetryableExportError } from '../batch-export.errors';
import {
  type DestinationFactory,
  type ExportChunk,
  type ExportRunInfo,
  type ExportedEventRow,
} from '../destination.types';
import { createBatchExportDestinations, MAX_DESTINATION_ERROR_CHARS } from '../destination-registry.util';
import {
  createHttpDestination as createStrictHttpDestination,
  DEFAULT_HTTP_DESTINATION_OPTIONS,
  type HttpDestinationOptions,
} from './http.destination';

const REFUSED = 'resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it';
/** The receivers of these tests listen on loopback, which the tests allow (as an admin may). */
const LOOPBACK_FETCH = createEgressFetch(new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }));
const createHttpDestination = (
  config: Record<string, unknown>,
  run: ExportRunInfo,
  options: HttpDestinationOptions = DEFAULT_HTTP_DESTINATION_OPTIONS,
) => createStrictHttpDestination(config, run, options, LOOPBACK_FETCH);
const factory: DestinationFactory = createHttpDestination;

/** Fast back-off, so retry tests take milliseconds; Retry-After still decides when given. */
const FAST: HttpDestinationOptions = {
  ...DEFAULT_HTTP_DESTINATION_OPTIONS,
  initialBackoffMs: 5,
  maxBackoffMs: 20,
};

interface ReceivedRequest {
  method: string | undefined;
  path: string | undefined;
  contentType: string | undefined;
  body: string;
  receivedAt: number;
}

type Handler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

/** A loopback server that records every request and answers with the handler of its turn (200 after them). */
class RecordingServer {
  readonly requests: ReceivedRequest[] = [];
  readonly unfinishedResponses: ServerResponse[] = [];
  private readonly server: Server;
  handlers: Handler[] = [];

  constructor() {
    this.server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        const index = this.requests.length;
        this.requests.push({
          method: request.method,
          path: request.url,
          contentType: request.headers['content-type'],
          body: Buffer.concat(parts).toString('utf8'),
          receivedAt: Date.now(),
        });
        const handler = this.handlers[index];
        if (handler) handler(request, response, index);
        else response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"Ok"}');
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/batch/`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  batches(): unknown[][] {
    return this.requests.map((request) => (JSON.parse(request.body) as { batch: unknown[] }).batch);
  }
}

function runInfo(): ExportRunInfo {
  return {
    runId: randomUUID(),
    batchExportId: randomUUID(),
    teamId: 7,
    model: 'events',
    dataIntervalStart: new Date('2024-03-01T10:00:00Z'),
    dataIntervalEnd: new Date('2024-03-01T11:00:00Z'),
  };
}

function eventRow(index: number): ExportedEventRow {
  const set = { email: `user${index}@example.com` };
  return {
    uuid: `0190f000-0000-7000-8000-${String(index).padStart(12, '0')}`,
    event: index % 2 === 0 ? '$pageview' : '$autocapture',
    timestamp: '2024-03-01T10:15:00.123Z',
    created_at: '2024-03-01T10:59:00Z',
    _inserted_at: '2024-03-01T10:59:30Z',
    distinct_id: `user-${index}`,
    team_id: 7,
    properties: { $browser: 'Firefox', n: index, $set: set },
    elements_chain: 'button:text="Buy"',
    person_id: randomUUID(),
    person_properties: { plan: 'free' },
    set,
    set_once: { first_seen: 'today' },
  };
}

function rowsFrom(first: number, count: number): ExportedEventRow[] {
  return Array.from({ length: count }, (_, offset) => eventRow(first + offset));
}

function chunkOf(rows: ExportedEventRow[]): ExportChunk {
  return {
    body: Readable.from(rows.map((row) => Buffer.from(JSON.stringify(row) + '\n'))),
    records: rows.length,
    cursor: 'cursor',
  };
}

const uuidsOf = (batch: unknown[]): unknown[] => batch.map((event) => (event as { uuid: string }).uuid);

describe('HTTP destination', () => {
  let server: RecordingServer;
  let url: string;

  beforeEach(async () => {
    server = new RecordingServer();
    url = await server.start();
  });

  afterEach(async () => {
    await server.stop();
  });

  it("POSTs the rows in order as PostHog /batch/ bodies of PostHog's HTTP export", async () => {
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), { ...FAST, batchSize: 3 });
    expect([writer.format, writer.resumable]).toEqual(['JSONEachRow', true]);

    const first = await writer.write(chunkOf(rowsFrom(1, 5)), new AbortController().signal);
    const second = await writer.write(chunkOf(rowsFrom(6, 2)), new AbortController().signal);
    await writer.finish(new AbortController().signal);

    // Batches never span chunks: 3 + 2, then 2.
    expect(server.batches().map(uuidsOf)).toEqual([
      rowsFrom(1, 3).map((row) => row.uuid),
      rowsFrom(4, 2).map((row) => row.uuid),
      rowsFrom(6, 2).map((row) => row.uuid),
    ]);
    expect(server.requests.map((request) => [request.method, request.path, request.contentType])).toEqual(
      Array(3).fill(['POST', '/batch/', 'application/json']),
    );
    const sizes = server.requests.map((request) => Buffer.byteLength(request.body));
    expect([first.bytes, second.bytes]).toEqual([(sizes[0] ?? 0) + (sizes[1] ?? 0), sizes[2]]);

    expect(JSON.parse(server.requests[0]?.body ?? '')).toEqual({
      api_key: 'phc_target',
      historical_migration: true,
      batch: [
        {
          uuid: eventRow(1).uuid,
          distinct_id: 'user-1',
          timestamp: '2024-03-01T10:15:00.123Z',
          event: '$autocapture',
          properties: {
            $browser: 'Firefox',
            n: 1,
            $set: { email: 'user1@example.com' },
            // Not in properties: folded in from the set_once column.
            $set_once: { first_seen: 'today' },
            $geoip_disable: true,
            $elements_chain: 'button:text="Buy"',
          },
        },
        {
          uuid: eventRow(2).uuid,
          distinct_id: 'user-2',
          timestamp: '2024-03-01T10:15:00.123Z',
          event: '$pageview',
          properties: {
            $browser: 'Firefox',
            n: 2,
            $set: { email: 'user2@example.com' },
            $set_once: { first_seen: 'today' },
            $geoip_disable: true,
          },
        },
        expect.objectContaining({ uuid: eventRow(3).uuid }),
      ],
    });
    expect(Object.keys(server.batches()[0]?.[0] ?? {})).toEqual([
      'uuid',
      'distinct_id',
      'timestamp',
      'event',
      'properties',
    ]);
  });

  it("sends PostHog's 5,000 events per request by default", async () => {
    const writer = factory({ url, token: 'phc_target' }, runInfo());
    await writer.write(chunkOf(rowsFrom(1, writer.maxChunkRows ?? 0)), new AbortController().signal);
    expect(server.batches().map((batch) => batch.length)).toEqual([5_000, 5_000]);
    expect(
      new Set(
        server
          .batches()
          .flat()
          .map((event) => (event as { uuid: string }).uuid),
      ).size,
    ).toBe(10_000);
  });

  it('sends a batch before its body would outgrow the byte limit', async () => {
    const eventBytes = Buffer.byteLength(JSON.stringify({ uuid: eventRow(1).uuid }));
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), {
      ...FAST,
      maxBodyBytes: 1_000 + eventBytes,
    });
    await writer.write(chunkOf(rowsFrom(1, 9)), new AbortController().signal);
    expect(server.requests.length).toBeGreaterThan(1);
    expect(
      Math.max(...server.requests.map((request) => Buffer.byteLength(request.body))),
    ).toBeLessThanOrEqual(1_000 + eventBytes);
    expect(
      server
        .batches()
        .flat()
        .map((event) => (event as { uuid: string }).uuid),
    ).toEqual(rowsFrom(1, 9).map((row) => row.uuid));
  });

  it('retries a request answered 503 twice, and delivers it once', async () => {
    const unavailable: Handler = (_request, response) => response.writeHead(503).end('busy');
    server.handlers = [unavailable, unavailable];
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), FAST);

    const result = await writer.write(chunkOf(rowsFrom(1, 4)), new AbortController().signal);

    expect(server.requests).toHaveLength(3);
    expect(new Set(server.requests.map((request) => request.body)).size).toBe(1);
    expect(result.bytes).toBe(Buffer.byteLength(server.requests[2]?.body ?? ''));
  });

  it('waits as long as a 429 asks in Retry-After', async () => {
    server.handlers = [(_request, response) => response.writeHead(429, { 'Retry-After': '1' }).end()];
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), FAST);

    await writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);

    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    // The back-off alone would have retried after a few milliseconds.
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('retries a connection closed without an answer', async () => {
    server.handlers = [(request) => request.socket.destroy()];
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), FAST);

    await writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);

    // The first copy arrived but got no answer: it is sent again (receivers deduplicate by uuid).
    const uuids = rowsFrom(1, 2).map((row) => row.uuid);
    expect(server.batches().map(uuidsOf)).toEqual([uuids, uuids]);
  });

  it('fails with a retryable error once a request ran out of attempts', async () => {
    server.handlers = Array<Handler>(10).fill((_request, response) => response.writeHead(502).end());
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), {
      ...FAST,
      maxAttempts: 3,
    });

    const error = (await writer
      .write(chunkOf(rowsFrom(1, 2)), new AbortController().signal)
      .catch((caught: unknown) => caught)) as Error;

    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(NonRetryableExportError);
    expect(error.message).toMatch(/no 2xx after 3 attempts \(last: HTTP 502\)/);
    expect(server.requests).toHaveLength(3);
  });

  it('fails without retry on a 400, with the status and an excerpt of the answer', async () => {
    server.handlers = [
      (_request, response) =>
        response.writeHead(400).end(JSON.stringify({ type: 'validation_error', detail: 'Invalid api_key' })),
    ];
    const writer = createHttpDestination({ url, token: 'phc_wrong' }, runInfo(), FAST);

    const failure = writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);

    await expect(failure).rejects.toThrow(NonRetryableExportError);
    await expect(failure).rejects.toThrow(/answered 400: .*Invalid api_key/);
    expect(server.requests).toHaveLength(1);
  });

  it('stops a cancelled run mid-chunk, aborting the request in flight', async () => {
    const controller = new AbortController();
    let inFlight: ServerResponse | undefined;
    const responseClosed = new Promise<boolean>((resolve) => {
      server.handlers = [
        (_request, response) => response.writeHead(200).end(),
        (_request, response) => {
          // Never answered: the run is cancelled while this request waits.
          inFlight = response;
          response.on('close', () => resolve(!response.writableEnded));
          controller.abort(new Error('run cancelled'));
        },
      ];
    });
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), { ...FAST, batchSize: 2 });

    await expect(writer.write(chunkOf(rowsFrom(1, 6)), controller.signal)).rejects.toThrow('run cancelled');

    expect(await responseClosed).toBe(true);
    expect(inFlight).toBeDefined();
    expect(server.requests).toHaveLength(2);
  });

  it('refuses a loopback receiver by default, before sending anything, and without retrying', async () => {
    server.handlers = [(_request, response) => response.writeHead(200).end('internal answer')];
    const port = new URL(url).port;
    for (const target of [
      url,
      `http://2130706433:${port}/batch/`,
      `http://[::ffff:127.0.0.1]:${port}/batch/`,
    ]) {
      const writer = createStrictHttpDestination({ url: target, token: 'phc_target' }, runInfo(), FAST);
      const failure = writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);
      await expect(failure).rejects.toThrow(NonRetryableExportError);
    }
    const writer = createStrictHttpDestination(
      { url: `http://localhost:${port}/batch/`, token: 't' },
      runInfo(),
      FAST,
    );
    await expect(writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal)).rejects.toThrow(
      `HTTP destination: localhost ${REFUSED}`,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("quotes at most a short excerpt of a receiver's answer, however long", async () => {
    const answer = `${'internal page '.repeat(100_000)}END`;
    server.handlers = [(_request, response) => response.writeHead(404).end(answer)];
    const writer = createHttpDestination({ url, token: 'phc_target' }, runInfo(), FAST);
    const error = (await writer
      .write(chunkOf(rowsFrom(1, 2)), new AbortController().signal)
      .catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(NonRetryableExportError);
    expect(error.message).toMatch(/answered 404: internal page/);
    expect(error.message.length).toBeLessThan(500);
  });

  it('bounds every error of the destinations the workers run', () => {
    const destinations = createBatchExportDestinations({ egress: EgressPolicy.strict() });
    const error = (() => {
      try {
        destinations.HTTP({ url: `not a url ${'x'.repeat(5_000)}`, token: 't' }, runInfo());
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(NonRetryableExportError);
    expect(error?.message.length).toBeLessThan(MAX_DESTINATION_ERROR_CHARS + 40);
    expect(error?.message).toMatch(/… \(\d+ more characters\)$/);
  });

  it('refuses a config whose url is not http(s)', () => {
    expect(() => factory({ url: 'ftp://example.com', token: 't' }, runInfo())).toThrow(
      NonRetryableExportError,
    );
    expect(() => factory({ url: 'http://example.com' }, runInfo())).toThrow(/config.token is required/);
  });
});
