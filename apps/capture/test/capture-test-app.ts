import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import pino from 'pino';
import type { CapturedEvent } from '@hogbase/event-contract';
import { openDataSource } from '@hogbase/postgres';
import { InProcessBus, type ConsumedBatch, type EventPublisher } from '@hogbase/queue';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import { ProjectTokenCache, buildCaptureApp, createCapturePool } from '@hogbase/capture-server';

export const PROJECT_TOKEN = 'phc_capture_test_token';

export interface CaptureTestApp {
  baseUrl: string;
  teamId: number;
  /** What reached the queue's consumer, in order, per topic. */
  received: { topic: string; key: string | null; event: CapturedEvent }[];
  /** Make the consumer fail (the in-process bus then answers 503 to the publishes of that batch). */
  failWrites(fail: boolean): void;
  app: FastifyInstance;
  close(): Promise<void>;
}

/**
 * The capture app over HTTP on a random port, tokens from a real Postgres, events through the
 * in-process bus (the product's embedded queue) or a given publisher.
 */
export async function startCaptureTestApp(publisher?: EventPublisher): Promise<CaptureTestApp> {
  const database: TestDatabase = await createTestDatabase();
  const dataSource = await openDataSource({ url: database.url });
  await dataSource.query(
    `INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-4000-8000-0000000000aa', 'Org', 'org')`,
  );
  const [{ id: teamId }] = await dataSource.query<{ id: number }[]>(
    `INSERT INTO teams (uuid, organization_id, name, api_token)
     VALUES ('00000000-0000-4000-8000-0000000000bb', '00000000-0000-4000-8000-0000000000aa', 'Web', $1) RETURNING id`,
    [PROJECT_TOKEN],
  );
  await dataSource.destroy();

  const received: CaptureTestApp['received'] = [];
  let failing = false;
  const bus = new InProcessBus();
  await bus.start((batch: ConsumedBatch) => {
    if (failing) return Promise.reject(new Error('storage unavailable'));
    for (const message of batch.messages) {
      received.push({
        topic: batch.topic,
        key: message.key,
        event: JSON.parse(message.value) as CapturedEvent,
      });
    }
    return Promise.resolve();
  });
  const logger = pino({ level: 'silent' });
  const pool: Pool = createCapturePool(database.url, logger, 2);
  const { app } = buildCaptureApp({
    publisher: publisher ?? bus,
    tokens: new ProjectTokenCache(pool),
    logger,
    batchBodyLimit: 20 * 1024 * 1024,
    eventBodyLimit: 2 * 1024 * 1024,
    maxDecodedBytes: 100 * 1024 * 1024,
    trustProxy: false,
    ready: () => Promise.resolve(true),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    teamId,
    received,
    failWrites: (fail) => {
      failing = fail;
    },
    app,
    async close() {
      await app.close();
      await bus.stop();
      await pool.end();
      await database.drop();
    },
  };
}
