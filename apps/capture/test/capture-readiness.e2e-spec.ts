import { randomUUID } from 'node:crypto';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { Client } from 'pg';
import pino from 'pino';
import { createCapturePool, startCaptureService, type CaptureService } from '@hogbase/capture-server';
import { loadCaptureConfig } from '@hogbase/config';
import { openDataSource } from '@hogbase/postgres';
import { InProcessBus } from '@hogbase/queue';
import {
  createTestDatabase,
  eventually,
  freePort,
  killApps,
  splitModeEnv,
  startApp,
  stopApp,
  waitForApp,
  type AppProcess,
  type TestDatabase,
} from '@hogbase/test-support';

const TOKEN = 'phc_readiness_test_token';

/**
 * Ready means able to take events (issue 28, defect 6): a capture that never reached Postgres knows
 * no project token, so every event would be a 503; it must report not ready until it has loaded the
 * tokens, and once it has, a Postgres outage leaves it ready, serving the projects it knows.
 */
describe('capture readiness and Postgres', () => {
  let database: TestDatabase;
  let admin: Client;

  beforeEach(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    try {
      await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Org', 'org')`, [
        randomUUID(),
      ]);
      await dataSource.query(
        `INSERT INTO teams (uuid, organization_id, name, api_token)
         SELECT $1, id, 'Web', $2 FROM organizations`,
        [randomUUID(), TOKEN],
      );
    } finally {
      await dataSource.destroy();
    }
    // On the server's own database: ALTER DATABASE … ALLOW_CONNECTIONS is refused from inside it.
    admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
  });

  afterEach(async () => {
    await allowConnections(true).catch(() => undefined);
    await admin.end();
    await database.drop();
  });

  /** Postgres refusing this database's connections (and ending the open ones), or accepting them. */
  async function allowConnections(allow: boolean): Promise<void> {
    await admin.query(`ALTER DATABASE ${database.name} WITH ALLOW_CONNECTIONS ${allow}`);
    if (!allow) {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [
        database.name,
      ]);
    }
  }

  it('is not ready while it has never reached Postgres, ready once it loaded the tokens, and stays ready through a later outage', async () => {
    await allowConnections(false);
    const received: string[] = [];
    const bus = new InProcessBus();
    await bus.start((batch) => {
      for (const message of batch.messages)
        received.push((JSON.parse(message.value) as { uuid: string }).uuid);
      return Promise.resolve();
    });
    const logger = pino({ level: 'silent' });
    const pool = createCapturePool(database.url, logger, 2);
    const config = loadCaptureConfig({ CAPTURE_HOST: '127.0.0.1', CAPTURE_PORT: '0', LOG_LEVEL: 'silent' });
    let capture: CaptureService | undefined;
    try {
      capture = await startCaptureService(config, { publisher: bus, pool, logger });
      const url = capture.url;
      const readiness = async () => {
        const response = await fetch(`${url}/_ready`);
        return {
          status: response.status,
          body: (await response.json()) as { checks: Record<string, unknown> },
        };
      };
      const post = async (token: string) => {
        const uuid = randomUUID();
        const response = await fetch(`${url}/batch/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: token, batch: [{ event: 'e', distinct_id: 'd', uuid }] }),
        });
        await response.arrayBuffer();
        return { status: response.status, retryAfter: response.headers.get('retry-after'), uuid };
      };

      // Started while Postgres refuses: the queue takes events, but no token is known.
      const notReady = await readiness();
      expect(notReady.status).toBe(503);
      expect(notReady.body.checks).toMatchObject({
        queue: true,
        tokens: expect.stringMatching(/^no project token loaded yet/),
      });
      expect(await post(TOKEN)).toMatchObject({ status: 503, retryAfter: '5' });

      await allowConnections(true);
      await eventually('capture to report ready', async () => (await readiness()).status === 200, {
        timeoutMs: 60_000,
      });
      const accepted = await post(TOKEN);
      expect(accepted.status).toBe(200);
      expect(received).toContain(accepted.uuid);

      // A later outage: the tokens it loaded keep it ready and serving their project.
      await allowConnections(false);
      const during = await readiness();
      expect(during.status).toBe(200);
      expect(during.body.checks).toMatchObject({ queue: true, tokens: true, postgres: expect.any(String) });
      expect((await post(TOKEN)).status).toBe(200);
      expect(await post('phc_never_seen')).toMatchObject({ status: 503, retryAfter: '5' });
    } finally {
      await capture?.stop();
      await bus.stop();
      await pool.end();
    }
  });

  describe('CAPTURE_WORKERS=2', () => {
    let app: AppProcess | undefined;

    afterEach(async () => {
      if (app) await stopApp(app).catch(() => killApps(app));
      app = undefined;
    });

    /** `/_ready` of `count` fresh connections: node:cluster hands them to the workers in turn. */
    async function readinessOfEachWorker(
      url: string,
      count = 6,
    ): Promise<{ status: number; checks?: Record<string, unknown> }[]> {
      const answers: { status: number; checks?: Record<string, unknown> }[] = [];
      for (let index = 0; index < count; index++) {
        answers.push(
          await new Promise((resolve) => {
            const request = get(`${url}/_ready`, { agent: false }, (response) => {
              let text = '';
              response.on('data', (chunk: Buffer) => (text += chunk.toString()));
              response.on('end', () =>
                resolve({
                  status: response.statusCode ?? 0,
                  checks: (JSON.parse(text) as { checks?: Record<string, unknown> }).checks,
                }),
              );
            });
            request.on('error', () => resolve({ status: 0 }));
          }),
        );
      }
      return answers;
    }

    it('reports every worker not ready until it has loaded the tokens, then ready', async () => {
      const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
      if (brokers.length === 0) throw new Error('KAFKA_BROKERS is not set: run through `npm test`');
      await allowConnections(false);
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      app = startApp('capture', {
        ...splitModeEnv({
          databaseUrl: database.url,
          brokers,
          consumerGroup: `capture-readiness-${randomUUID()}`,
          dataDir: tmpdir(),
        }),
        CAPTURE_PORT: String(port),
        CAPTURE_WORKERS: '2',
      });
      const started = app;
      // Both workers serving, their queue reachable: they could take events but for the tokens.
      await waitForApp(
        started,
        'both workers answering /_ready with the queue ready',
        async () =>
          started.output().split('capture on').length > 2 &&
          (await readinessOfEachWorker(url)).every((answer) => answer.checks?.queue === true),
      );
      expect(await readinessOfEachWorker(url)).toEqual(
        Array.from({ length: 6 }, () => ({
          status: 503,
          checks: expect.objectContaining({ tokens: expect.stringMatching(/^no project token loaded yet/) }),
        })),
      );

      await allowConnections(true);
      await waitForApp(started, 'every worker ready', async () =>
        (await readinessOfEachWorker(url)).every((answer) => answer.status === 200),
      );
    });
  });
});
