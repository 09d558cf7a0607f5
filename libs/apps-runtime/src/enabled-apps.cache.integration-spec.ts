import type { Pool } from 'pg';
import pino from 'pino';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { eventually, insertEnabledAppRows, insertProjectRows } from '@hogbase/test-support';
import { createAppsRuntime, type AppsRuntime } from './apps-runtime.service';
import { EnabledApps } from './enabled-apps.cache';
import {
  startTestReceiver,
  testAppsRuntimeConfig,
  type TestReceiver,
} from './testing/apps-runtime-test.util';

jest.setTimeout(60_000);

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('EnabledApps: which start failures it remembers', () => {
  let database: MigratedTestDatabase;
  let pool: Pool;
  let organizationId: string;
  let teamId: number;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
    ({ organizationId, teamId } = await insertProjectRows(pool, 'Apps'));
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await pool.query('UPDATE plugin_configs SET enabled = false');
  });

  afterAll(async () => {
    await database?.close();
  });

  async function logLines(runtime: AppsRuntime, configId: number): Promise<string[]> {
    await runtime.log.flush();
    const { rows } = await pool.query<{ message: string }>(
      'SELECT message FROM plugin_log_entries WHERE plugin_config_id = $1 ORDER BY timestamp',
      [configId],
    );
    return rows.map((row) => row.message);
  }

  it('tries an app again once the sandboxes have room: a refusal of the budget is not its failure', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const receiving: TestReceiver = await startTestReceiver((_request, response) => {
      void released.then(() => response.end('{}'));
    });
    cleanups.push(() => receiving.close());
    // Room for one sandbox; a new one waits for room up to its time limit (500 ms), then is refused.
    const runtime = createAppsRuntime(
      pool,
      testAppsRuntimeConfig({
        memoryLimitBytes: 32 * 1024 * 1024,
        sandboxesMemoryBytes: 32 * 1024 * 1024,
        timeLimitMs: 500,
        callCpuMs: 250,
        fetchTimeoutMs: 30_000,
      }),
      logger,
    );
    cleanups.push(() => runtime.close());
    // Another user of the same sandboxes whose call lasts until the test releases it.
    const holder = new EnabledApps(pool, { ...runtime.services, timeLimitMs: 30_000 }, undefined, logger);
    cleanups.push(() => holder.stop());
    const busy = await insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      code: `exports.runEveryMinute = async ({ config }) => { await fetch(config.url + '/hold'); };`,
      config: { url: receiving.url },
    });
    const waiting = await insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      code: 'exports.runEveryMinute = async () => "started";',
      config: {},
    });

    const holding = (await holder.forConfig(busy))?.call('runEveryMinute');
    expect(holding).toBeDefined();
    await eventually('the busy call', () => (receiving.paths.length > 0 ? true : undefined));
    await expect(runtime.apps.forConfig(waiting)).resolves.toBeUndefined();

    release();
    await holding;
    // The busy app is idle now: it is unloaded for the waiting one, which starts.
    const started = await runtime.apps.forConfig(waiting);
    await expect(started?.call('runEveryMinute')).resolves.toBe('started');
  });

  it('keeps an app whose own setup fails out until its code or config changes, logged once', async () => {
    const runtime = createAppsRuntime(pool, testAppsRuntimeConfig(), logger);
    cleanups.push(() => runtime.close());
    const configId = await insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      code: `exports.setupPlugin = ({ config }) => { if (!config.key) throw new Error('no API key'); };
             exports.runEveryMinute = () => 'running';`,
      config: {},
    });
    await expect(runtime.apps.forConfig(configId)).resolves.toBeUndefined();
    await expect(runtime.apps.forConfig(configId)).resolves.toBeUndefined();
    expect(await logLines(runtime, configId)).toEqual(['the app could not start: no API key']);

    await pool.query(`UPDATE plugin_configs SET config = '{"key": "k"}', updated_at = now() WHERE id = $1`, [
      configId,
    ]);
    await expect((await runtime.apps.forConfig(configId))?.call('runEveryMinute')).resolves.toBe('running');
  });
});
