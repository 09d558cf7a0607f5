import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import pino from 'pino';
import type { CapturedEvent } from '@hogbase/event-contract';
import { openDataSource } from '@hogbase/postgres';
import { InProcessBus, type ConsumedBatch, type EventPublisher } from '@hogbase/queue';
import {
  createTestDatabase,
  registerOpenApiDocumentFrom,
  unregisterOpenApiDocument,
} from '@hogbase/test-support';
import {
  ProjectTokenCache,
  buildCaptureApp,
  createCapturePool,
  createFlagServices,
} from '@hogbase/capture-server';

export const PROJECT_TOKEN = 'phc_capture_test_token';

/** The connection a seed writes through: the migrated test database's, closed once seeded. */
export type SeedDataSource = Awaited<ReturnType<typeof openDataSource>>;

export interface CaptureOnTestDatabaseOptions {
  /** The organization and its project (team) inserted first; `token` is the project API token. */
  project: {
    organizationId: string;
    organizationName: string;
    teamName: string;
    token: string;
    teamUuid?: string;
  };
  /** Further rows, inserted after the project. */
  seed?: (dataSource: SeedDataSource, teamId: number) => Promise<void>;
  /** What the in-process bus's consumer does with each batch. */
  consume: (batch: ConsumedBatch) => Promise<void>;
  /** Where capture publishes; the in-process bus when not given. */
  publisher?: EventPublisher;
  poolSize: number;
  /** Serves the SDK flag endpoints, with definitions read again on every request (`ttlMs: 0`). */
  flags?: boolean;
}

export interface CaptureOnTestDatabase {
  baseUrl: string;
  teamId: number;
  /** The capture app's own pool. */
  pool: Pool;
  app: FastifyInstance;
  /** Closes the app, the bus and the pool, then drops the database. */
  close(): Promise<void>;
}

/**
 * The capture app over HTTP on a random port, on a new migrated database holding one organization
 * and its project, with the in-process bus (the product's embedded queue) started.
 */
export async function startCaptureOnTestDatabase(
  options: CaptureOnTestDatabaseOptions,
): Promise<CaptureOnTestDatabase> {
  const { project } = options;
  const database = await createTestDatabase();
  const dataSource = await openDataSource({ url: database.url });
  let teamId: number;
  try {
    await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, $2, $3)`, [
      project.organizationId,
      project.organizationName,
      project.organizationName.toLowerCase(),
    ]);
    [{ id: teamId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, $3, $4) RETURNING id`,
      [project.teamUuid ?? randomUUID(), project.organizationId, project.teamName, project.token],
    );
    await options.seed?.(dataSource, teamId);
  } finally {
    await dataSource.destroy();
  }

  const bus = new InProcessBus();
  await bus.start(options.consume);
  const logger = pino({ level: 'silent' });
  const pool = createCapturePool(database.url, logger, options.poolSize);
  const { app } = buildCaptureApp({
    publisher: options.publisher ?? bus,
    tokens: new ProjectTokenCache(pool),
    logger,
    batchBodyLimit: 20 * 1024 * 1024,
    eventBodyLimit: 2 * 1024 * 1024,
    maxDecodedBytes: 100 * 1024 * 1024,
    trustProxy: false,
    ready: () => Promise.resolve(true),
    ...(options.flags ? { flags: createFlagServices(pool, { ttlMs: 0 }) } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  // Every answer the suite receives is checked against the document capture serves (issue 29).
  await registerOpenApiDocumentFrom(baseUrl);
  return {
    baseUrl,
    teamId,
    pool,
    app,
    async close() {
      unregisterOpenApiDocument(baseUrl);
      await app.close();
      await bus.stop();
      await pool.end();
      await database.drop();
    },
  };
}

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
  const received: CaptureTestApp['received'] = [];
  let failing = false;
  const capture = await startCaptureOnTestDatabase({
    project: {
      organizationId: '00000000-0000-4000-8000-0000000000aa',
      organizationName: 'Org',
      teamName: 'Web',
      token: PROJECT_TOKEN,
      teamUuid: '00000000-0000-4000-8000-0000000000bb',
    },
    consume: (batch) => {
      if (failing) return Promise.reject(new Error('storage unavailable'));
      for (const message of batch.messages) {
        received.push({
          topic: batch.topic,
          key: message.key,
          event: JSON.parse(message.value) as CapturedEvent,
        });
      }
      return Promise.resolve();
    },
    publisher,
    poolSize: 2,
  });
  return {
    baseUrl: capture.baseUrl,
    teamId: capture.teamId,
    received,
    failWrites: (fail) => {
      failing = fail;
    },
    app: capture.app,
    close: () => capture.close(),
  };
}
