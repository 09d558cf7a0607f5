import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Arrivals {
  /** performance.now() of the first and the last expected event's webhook. */
  firstAt: number;
  lastAt: number;
  received: number;
  /** At-least-once delivery may send one twice. */
  duplicates: number;
  /** Another round's, or a body without a uuid. */
  unexpected: number;
  /** To replay the app's work outside the job engine. */
  samples: string[];
}

export interface ExpectedWebhooks {
  done: Promise<Arrivals>;
  /** So far, for an error message. */
  current(): Arrivals;
}

/** Answers 200 to every POST. */
export interface WebhookReceiver {
  url: string;
  /** Replaces the previous round's expectation. */
  expect(uuids: ReadonlySet<string>, sampleCount: number): ExpectedWebhooks;
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function uuidOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { uuid?: unknown };
    return typeof parsed.uuid === 'string' ? parsed.uuid : undefined;
  } catch {
    return undefined;
  }
}

/** Shares the event loop with ingestion: its work per webhook is small beside theirs. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let round:
    | {
        uuids: ReadonlySet<string>;
        seen: Set<string>;
        arrivals: Arrivals;
        sampleCount: number;
        resolve: (arrivals: Arrivals) => void;
      }
    | undefined;

  const server = createServer((request, response) => {
    readBody(request).then(
      (body) => {
        const at = performance.now();
        const uuid = uuidOf(body);
        if (round) {
          const { arrivals } = round;
          if (uuid === undefined || !round.uuids.has(uuid)) arrivals.unexpected += 1;
          else if (round.seen.has(uuid)) arrivals.duplicates += 1;
          else {
            round.seen.add(uuid);
            arrivals.received += 1;
            if (arrivals.received === 1) arrivals.firstAt = at;
            arrivals.lastAt = at;
            if (arrivals.samples.length < round.sampleCount) arrivals.samples.push(body);
            if (arrivals.received === round.uuids.size) round.resolve({ ...arrivals });
          }
        }
        response.writeHead(200, { 'Content-Type': 'application/json' }).end('{"ok":true}');
      },
      () => response.writeHead(400).end(),
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/webhook`,
    expect(uuids, sampleCount) {
      const arrivals: Arrivals = {
        firstAt: Number.NaN,
        lastAt: Number.NaN,
        received: 0,
        duplicates: 0,
        unexpected: 0,
        samples: [],
      };
      let resolve: (value: Arrivals) => void = () => undefined;
      const done = new Promise<Arrivals>((settle) => (resolve = settle));
      round = { uuids, seen: new Set(), arrivals, sampleCount, resolve };
      return { done, current: () => ({ ...arrivals }) };
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
