import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { testS3Endpoint } from '@hogbase/test-support';
import { managementRequest } from './management-request';

export interface ReceivedEvent {
  uuid: string;
  event: string;
  timestamp: string;
  distinct_id: string;
}

/**
 * A loopback PostHog `/batch/` endpoint; each export sends its own `token`, so one receiver serves
 * several. Records the events of bodies answered 2xx, duplicates included; can be slow or refuse per token.
 */
export class BatchReceiver {
  /** 200 at once unless set. */
  private readonly behaviours = new Map<string, { status: number; delayMs: number }>();
  /** Whatever the answer. */
  private readonly received = new Map<string, number>();
  private readonly accepted = new Map<string, ReceivedEvent[][]>();

  private readonly server: Server;
  private port = 0;

  private constructor() {
    this.server = createServer((request, response) => {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        void this.answer(Buffer.concat(parts).toString('utf8')).then((status) => {
          response.writeHead(status, { 'Content-Type': 'application/json' });
          response.end(status < 300 ? '{"status":"Ok"}' : '{"type":"validation_error","detail":"refused"}');
        });
      });
    });
  }

  static async start(): Promise<BatchReceiver> {
    const receiver = new BatchReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.port = (receiver.server.address() as AddressInfo).port;
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/batch/`;
  }

  behave(token: string, behaviour: { status?: number; delayMs?: number }): void {
    this.behaviours.set(token, { status: behaviour.status ?? 200, delayMs: behaviour.delayMs ?? 0 });
  }

  /** In arrival order. */
  events(token: string): ReceivedEvent[] {
    return (this.accepted.get(token) ?? []).flat();
  }

  batches(token: string): number {
    return this.accepted.get(token)?.length ?? 0;
  }

  /** Whatever the answer, also those still waiting for it. */
  requests(token: string): number {
    return this.received.get(token) ?? 0;
  }

  async close(): Promise<void> {
    // The exporting process keeps its connections alive: close them, or close() waits for them.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(text: string): Promise<number> {
    let body: { api_key?: unknown; batch?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      return 400;
    }
    const token = typeof body.api_key === 'string' ? body.api_key : '';
    this.received.set(token, this.requests(token) + 1);
    const { delayMs } = this.behaviours.get(token) ?? { delayMs: 0 };
    if (delayMs > 0) await sleep(delayMs);
    // Read after the delay: a test may change the answer while a body waits.
    const { status } = this.behaviours.get(token) ?? { status: 200 };
    if (status < 300 && Array.isArray(body.batch)) {
      const batches = this.accepted.get(token) ?? [];
      batches.push(body.batch as ReceivedEvent[]);
      this.accepted.set(token, batches);
    }
    return status;
  }
}

export interface TestEvent {
  uuid: string;
  event: string;
  distinctId: string;
  timestamp: Date;
  properties?: Record<string, unknown>;
}

/**
 * `count` events over `[start, end)`, a minute clear of the hours' edges (capture corrects for clock
 * skew), and three `outside` events just before and after; `inside` sets an event's fields by index.
 */
export function eventsAroundRange(
  range: { start: number; end: number },
  count: number,
  inside: (index: number) => Pick<TestEvent, 'event' | 'distinctId' | 'properties'>,
): { inside: TestEvent[]; outside: TestEvent[] } {
  const span = range.end - range.start;
  return {
    inside: Array.from({ length: count }, (_, index) => ({
      uuid: randomUUID(),
      timestamp: new Date(range.start + 60_000 + Math.floor((index * span) / count)),
      ...inside(index),
    })),
    outside: [range.start - 5 * 60_000, range.end + 5 * 60_000, range.end + 3_600_000].map((time) => ({
      uuid: randomUUID(),
      event: 'outside',
      distinctId: 'user-outside',
      timestamp: new Date(time),
    })),
  };
}

export async function captureEvents(
  captureUrl: string,
  projectApiKey: string,
  events: TestEvent[],
): Promise<void> {
  const { PostHog } = await import('posthog-node');
  const client = new PostHog(projectApiKey, {
    host: captureUrl,
    flushAt: 500,
    maxBatchSize: 1_000,
    // The SDK drops the oldest events past its queue size: room for all of them.
    maxQueueSize: events.length + 1_000,
    fetchRetryCount: 3,
  });
  for (const event of events) {
    client.capture({
      distinctId: event.distinctId,
      event: event.event,
      uuid: event.uuid,
      timestamp: event.timestamp,
      properties: event.properties ?? {},
    });
  }
  await client.shutdown(120_000);
}

const gunzipAsync = promisify(gunzip);

/** Every object of the bucket by key, and its JSON-lines rows (a `.gz` key gunzipped first). */
export async function readS3Rows(
  s3: S3Client,
  bucket: string,
): Promise<{ keys: string[]; rows: Record<string, unknown>[] }> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  const keys = (listed.Contents ?? []).map((object) => object.Key ?? '').sort();
  const rows: Record<string, unknown>[] = [];
  for (const key of keys) {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const bytes = Buffer.from(await object.Body!.transformToByteArray());
    const text = (key.endsWith('.gz') ? await gunzipAsync(bytes) : bytes).toString('utf8');
    rows.push(
      ...text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    );
  }
  return { keys, rows };
}

export class BatchExportsApi {
  constructor(
    private readonly managementUrl: string,
    private readonly credentials: { personal_api_key: string; project_id: number },
  ) {}

  request(method: string, path: string, body?: unknown) {
    return managementRequest(this.managementUrl, this.credentials.personal_api_key, method, path, body);
  }

  path(path = ''): string {
    return `/api/projects/${this.credentials.project_id}/batch_exports/${path}`;
  }

  async createHttpExport(
    receiver: BatchReceiver,
    token: string,
    fields: { interval: string; paused?: boolean; includeEvents?: string[] },
  ): Promise<string> {
    const { includeEvents, ...rest } = fields;
    const created = await this.request('POST', this.path(), {
      name: `to ${token}`,
      ...rest,
      destination: {
        type: 'HTTP',
        config: { url: receiver.url, token, ...(includeEvents ? { include_events: includeEvents } : {}) },
      },
    });
    expect({ token, status: created.status }).toEqual({ token, status: 201 });
    return created.body.id as string;
  }

  /** On the S3Mock of `npm test`, hourly, `config` added to the destination's. */
  async createS3Export(bucket: string, config: Record<string, unknown>): Promise<string> {
    const created = await this.request('POST', this.path(), {
      name: `to ${bucket}`,
      interval: 'hour',
      destination: {
        type: 'S3',
        config: {
          bucket_name: bucket,
          region: 'us-east-1',
          endpoint_url: testS3Endpoint(),
          aws_access_key_id: 'test',
          aws_secret_access_key: 'test',
          ...config,
        },
      },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  async createBackfill(exportId: string, start: number, end: number): Promise<string> {
    const backfill = await this.request('POST', this.path(`${exportId}/backfills/`), {
      start_at: new Date(start).toISOString(),
      end_at: new Date(end).toISOString(),
    });
    expect(backfill.status).toBe(201);
    return backfill.body.backfill_id as string;
  }

  /** Throws once Failed, which no waiting will change. */
  async backfillCompleted(exportId: string, backfillId: string): Promise<boolean> {
    const backfill = await this.backfill(exportId, backfillId);
    if (backfill.status === 'Failed') throw new Error(`backfill failed: ${JSON.stringify(backfill)}`);
    return backfill.status === 'Completed';
  }

  /** Newest first; one page (tests make fewer than 100). */
  async runs(exportId: string): Promise<ExportRun[]> {
    const listed = await this.request('GET', this.path(`${exportId}/runs/`));
    expect(listed.status).toBe(200);
    return listed.body.results as ExportRun[];
  }

  async backfill(exportId: string, backfillId: string): Promise<Record<string, any>> {
    const found = await this.request('GET', this.path(`${exportId}/backfills/${backfillId}/`));
    expect(found.status).toBe(200);
    return found.body;
  }

  /** As the event listing counts them. */
  async countEvents(event: string, from: Date, to: Date): Promise<number> {
    const query = new URLSearchParams({
      event,
      select: JSON.stringify(['count()']),
      after: from.toISOString(),
      before: to.toISOString(),
    });
    const listed = await this.request(
      'GET',
      `/api/projects/${this.credentials.project_id}/events/?${query.toString()}`,
    );
    if (listed.status !== 200) return -1;
    return Number((listed.body.results as unknown[][])[0]?.[0] ?? 0);
  }
}

export interface ExportRun {
  id: string;
  status: string;
  records_completed: number;
  latest_error: string | null;
  data_interval_start: string | null;
  data_interval_end: string;
  backfill: string | null;
}
