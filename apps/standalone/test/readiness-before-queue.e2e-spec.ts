import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  freePort,
  killApps,
  readInitialCredentials,
  READY_TIMEOUT_MS,
  standaloneEnv,
  startApp,
  stopApp,
  waitForApp,
  waitForReady,
  type AppProcess,
} from './app-process';

/**
 * npm start with KAFKA_BROKERS naming a broker that does not answer: the management API listens and
 * serves without waiting for ingestion's consumer group, its /_ready says what the process waits
 * for (503), and SIGTERM still stops it cleanly.
 */
describe('npm start before its queue answers', () => {
  let dataDir: string;
  let server: AppProcess | undefined;

  afterAll(async () => {
    await killApps(server);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'serves the management API at once and answers /_ready 503 naming ingestion’s queue',
    async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-readiness-test-'));
      const [port, deadBrokerPort] = [await freePort(), await freePort()];
      const managementUrl = `http://127.0.0.1:${port}`;
      server = startApp('standalone', {
        ...standaloneEnv(dataDir, port),
        // Nothing listens there: every connection is refused.
        KAFKA_BROKERS: `127.0.0.1:${deadBrokerPort}`,
      });
      const app = server;
      await waitForReady(app, managementUrl, '/_health');
      // Listening, then the first run writes the credentials; the pipeline starts after them.
      await waitForApp(app, 'the pipeline started', () =>
        Promise.resolve(app.output().includes('capture on http://')),
      );

      const ready = await fetch(`${managementUrl}/_ready`);
      const body = (await ready.json()) as { code: string; checks: Record<string, boolean | string> };
      expect(ready.status).toBe(503);
      expect(body.code).toBe('service_unavailable');
      expect(body.checks.postgres).toBe(true);
      expect(typeof body.checks['ingestion.queue']).toBe('string');

      const { personal_api_key: key } = await readInitialCredentials(dataDir);
      const me = await fetch(`${managementUrl}/api/users/@me/`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(me.status).toBe(200);

      expect(await stopApp(app)).toEqual({ code: 0, signal: null });
    },
    3 * READY_TIMEOUT_MS,
  );
});
