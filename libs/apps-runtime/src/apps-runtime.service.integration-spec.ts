import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import pino from 'pino';
import { Registry } from 'prom-client';
import { SecretBox } from '@hogbase/config';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { eventually, insertEnabledAppRows, insertProjectRows } from '@hogbase/test-support';
import { SandboxTimeoutError } from '@hogbase/apps-sandbox';
import { AppSkippedError, type AppCapturedEvent } from './app-instance.service';
import type { DestinationEvent } from './app-destinations.service';
import { AppTransformations } from './app-transformations.service';
import { createAppsRuntime, type AppsRuntime } from './apps-runtime.service';
import {
  startTestDestinations,
  testAppsRuntimeConfig,
  testCapturedEvent,
} from './testing/apps-runtime-test.util';

jest.setTimeout(120_000);

const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback receiver answering each request with the next status of `statuses` (then 200). */
async function startReceiver(
  statuses: number[] = [],
): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      response.statusCode = request.url === '/hook' ? (statuses.shift() ?? 200) : 200;
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('apps runtime: the plugin API over Postgres and destinations on the job engine', () => {
  let database: MigratedTestDatabase;
  let pool: Pool;
  let teamId: number;
  let organizationId: string;
  const key = randomBytes(32);
  const secrets = new SecretBox([key]);
  const runtimes: AppsRuntime[] = [];
  const servers: Server[] = [];
  const config = () => testAppsRuntimeConfig({ encryptionKeys: [key] });

  beforeAll(async () => {
    database = await createMigratedTestDatabase(6);
    pool = database.pool;
    ({ organizationId, teamId } = await insertProjectRows(pool, 'Apps'));
  });

  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
    for (const server of servers.splice(0)) server.close();
  });

  afterAll(async () => {
    await database?.close();
  });

  /** Installs `code` as an app (its bundled code) and enables it for the team with `values`. */
  async function installApp(
    code: string,
    values: Record<string, unknown>,
    capabilities: Record<string, unknown> = {},
  ): Promise<number> {
    return insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      code,
      config: values,
      capabilities,
      metrics: { events: 'sum' },
    });
  }

  async function disableAll(): Promise<void> {
    await pool.query('UPDATE plugin_configs SET enabled = false');
  }

  function event(properties: Record<string, unknown> = {}): DestinationEvent {
    return {
      uuid: randomUUID(),
      event: 'purchase',
      team_id: teamId,
      distinct_id: 'buyer',
      properties: { amount: 3, ...properties },
      timestamp: new Date().toISOString(),
      elements_chain: '',
      person: { uuid: randomUUID(), properties: { plan: 'pro' }, created_at: new Date().toISOString() },
    };
  }

  it('gives an app its config with secrets opened, storage in Postgres, cache, cursor, capture and jobs', async () => {
    const captured: AppCapturedEvent[] = [];
    const jobs: { job: string; payload: unknown; runAt: Date }[] = [];
    const runtime = createAppsRuntime(pool, config(), logger, {
      capture: (appEvent) => {
        captured.push(appEvent);
        return Promise.resolve();
      },
      enqueueJob: (_app, job, payload, runAt) => {
        jobs.push({ job, payload, runAt });
        return Promise.resolve();
      },
    });
    runtimes.push(runtime);
    const configId = await installApp(
      `
      const { RetryError } = require('@posthog/plugin-scaffold');
      exports.setupPlugin = async ({ global, config }) => { global.greeting = 'hello ' + config.name; };
      exports.jobs = { follow: async (payload, meta) => meta.storage.set('followed', payload) };
      exports.runEveryMinute = async (meta) => {
        const seen = (await meta.storage.get('seen', 0)) + 1;
        await meta.storage.set('seen', seen);
        await meta.cache.set('hits', 1, 60);
        await meta.cache.incr('hits');
        await meta.cache.lpush('queue', ['a', 'b']);
        await meta.utils.cursor.init('page', 10);
        const page = await meta.utils.cursor.increment('page', 5);
        await posthog.capture('imported', { distinct_id: 'importer', page });
        await meta.jobs.follow({ page }).runIn(2, 'minutes');
        meta.metrics.events.increment(2);
        return { seen, greeting: meta.global.greeting, hits: await meta.cache.get('hits'),
                 queue: await meta.cache.lrange('queue', 0, -1), page, token: meta.config.token,
                 retryError: new RetryError('x') instanceof Error };
      };`,
      { name: 'Ada', token: { sealed: secrets.seal(JSON.stringify('s3cret')) } },
    );
    const app = await runtime.apps.forConfig(configId);
    expect(app).toBeDefined();
    await expect(app?.call('runEveryMinute')).resolves.toEqual({
      seen: 1,
      greeting: 'hello Ada',
      hits: 2,
      queue: ['b', 'a'],
      page: 15,
      token: 's3cret',
      retryError: true,
    });
    await expect(app?.call('runEveryMinute')).resolves.toMatchObject({ seen: 2, page: 20 });
    expect(captured[0]).toEqual({
      teamId,
      event: 'imported',
      distinctId: 'importer',
      properties: { distinct_id: 'importer', page: 15, $lib: 'posthog-plugin-server' },
    });
    expect(jobs[0]).toMatchObject({ job: 'follow', payload: { page: 15 } });
    expect(jobs[0].runAt.getTime()).toBeGreaterThan(Date.now() + 60_000);
    await app?.call('jobs.follow', { page: 15 });

    const { rows } = await pool.query<{ key: string; value: unknown }>(
      'SELECT key, value FROM plugin_storage WHERE plugin_config_id = $1 ORDER BY key',
      [configId],
    );
    expect(rows).toEqual([
      { key: '@cursor/page', value: 20 },
      { key: 'followed', value: { page: 15 } },
      { key: 'seen', value: 2 },
    ]);
    await disableAll();
  });

  it('runs processEvent transformations in config order: changed, dropped, and a failing app skipped', async () => {
    const runtime = createAppsRuntime(pool, config(), logger);
    runtimes.push(runtime);
    await installApp(
      `exports.processEvent = (event) => event.properties.drop ? null : ({ ...event, properties: { ...event.properties, first: true }, $set: { plan: 'pro' } });`,
      {},
      { methods: ['processEvent'] },
    );
    const failing = await installApp(
      `exports.processEvent = () => { throw new Error('boom'); };`,
      {},
      {
        methods: ['processEvent'],
      },
    );
    await installApp(
      `exports.processEvent = (event) => ({ ...event, event: event.event + ' (seen)', properties: { ...event.properties, second: event.properties.first } });`,
      {},
      { methods: ['processEvent'] },
    );
    const transformations = new AppTransformations(pool, runtime.apps, logger, new Registry());
    expect(await transformations.transformationTeams()).toEqual(new Set([teamId]));
    const captured = {
      uuid: randomUUID(),
      distinct_id: 'visitor',
      ip: '127.0.0.1',
      data: JSON.stringify({
        event: 'signed up',
        distinct_id: 'visitor',
        properties: { source: 'ad' },
        lib: 'x',
      }),
      now: new Date().toISOString(),
      sent_at: null,
      token: 'phc_test',
      team_id: teamId,
      event: 'signed up',
      timestamp: new Date().toISOString(),
    };
    const transformed = await transformations.transform(captured);
    expect(transformed).toMatchObject({ ...captured, event: 'signed up (seen)', data: expect.any(String) });
    expect(JSON.parse(transformed!.data)).toEqual({
      event: 'signed up (seen)',
      distinct_id: 'visitor',
      properties: { source: 'ad', first: true, second: true },
      $set: { plan: 'pro' },
      lib: 'x',
    });
    await expect(
      transformations.transform({
        ...captured,
        data: JSON.stringify({ event: 'signed up', properties: { drop: true } }),
      }),
    ).resolves.toBeNull();
    await runtime.log.flush();
    const { rows } = await pool.query<{ message: string }>(
      'SELECT message FROM plugin_log_entries WHERE plugin_config_id = $1',
      [failing],
    );
    expect(rows).toEqual([{ message: `processEvent failed for event ${captured.uuid}: boom` }]);
    await disableAll();
  });

  it('logs an app that cannot start to its config and keeps it out', async () => {
    const runtime = createAppsRuntime(pool, config(), logger);
    runtimes.push(runtime);
    const configId = await installApp(`exports.setupPlugin = () => { throw new Error('no API key'); };`, {});
    await expect(runtime.apps.forConfig(configId)).resolves.toBeUndefined();
    await runtime.log.flush();
    const { rows } = await pool.query<{ type: string; message: string }>(
      'SELECT type, message FROM plugin_log_entries WHERE plugin_config_id = $1',
      [configId],
    );
    expect(rows).toEqual([{ type: 'ERROR', message: 'the app could not start: no API key' }]);
    await disableAll();
  });

  it('delivers composeWebhook and onEvent after hand-off, retries a failing receiver and counts the outcome', async () => {
    const receiver = await startReceiver([503, 500]);
    servers.push(receiver.server);
    const runtime = createAppsRuntime(pool, config(), logger);
    runtimes.push(runtime);
    const webhookConfig = await installApp(
      `exports.composeWebhook = (event, { config }) =>
         event.event === 'skip' ? null : ({ url: config.url + '/hook', body: JSON.stringify({ uuid: event.uuid, plan: event.person.properties.plan }),
           headers: { 'Content-Type': 'application/json', 'X-Token': config.token } });`,
      { url: receiver.url, token: 'abc' },
      { methods: ['composeWebhook'] },
    );
    const onEventConfig = await installApp(
      `exports.onEvent = async (event, { config }) => { await fetch(config.url + '/on-event?uuid=' + event.uuid, { method: 'POST' }); };`,
      { url: receiver.url },
      { methods: ['onEvent'] },
    );
    const destinations = await startTestDestinations(runtime, {
      pool,
      connectionString: database.url,
      logger,
    });
    try {
      const first = event();
      const skipped = { ...event(), event: 'skip' };
      await destinations.handOff([first, skipped, { ...event(), team_id: teamId + 1_000 }]);

      // The webhook fails twice (503, then 500 on its first retry), is retried with back-off and lands.
      const hooks = await eventually(
        'the retried webhook',
        () => {
          const landed = receiver.received.filter((request) => request.path === '/hook');
          return landed.length >= 3 ? landed : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(hooks.map((hook) => JSON.parse(hook.body) as unknown)).toEqual([
        { uuid: first.uuid, plan: 'pro' },
        { uuid: first.uuid, plan: 'pro' },
        { uuid: first.uuid, plan: 'pro' },
      ]);
      expect(hooks[0].headers['x-token']).toBe('abc');
      const onEvents = receiver.received.filter((request) => request.path.startsWith('/on-event'));
      expect(onEvents.map((request) => request.path).sort()).toEqual(
        [`/on-event?uuid=${first.uuid}`, `/on-event?uuid=${skipped.uuid}`].sort(),
      );

      await runtime.log.flush();
      const stats = await eventually('delivery counts', async () => {
        await runtime.log.flush();
        const { rows } = await pool.query<{ plugin_config_id: number; succeeded: string; failed: string }>(
          'SELECT plugin_config_id, succeeded, failed FROM plugin_delivery_stats WHERE plugin_config_id = ANY($1) ORDER BY plugin_config_id',
          [[webhookConfig, onEventConfig]],
        );
        return rows.length === 2 && rows[0].succeeded === '2' ? rows : undefined;
      });
      expect(stats).toEqual([
        { plugin_config_id: webhookConfig, succeeded: '2', failed: '0' },
        { plugin_config_id: onEventConfig, succeeded: '2', failed: '0' },
      ]);
      const { rows: warnings } = await pool.query<{ message: string }>(
        `SELECT message FROM plugin_log_entries WHERE plugin_config_id = $1 AND type = 'WARN' ORDER BY timestamp`,
        [webhookConfig],
      );
      expect(warnings.map((warning) => warning.message)).toEqual([
        `Delivery of event ${first.uuid} failed: the receiver answered 503 (will retry)`,
        `Delivery of event ${first.uuid} failed: the receiver answered 500 (will retry)`,
      ]);
    } finally {
      await destinations.stop();
      await disableAll();
    }
  });

  async function logLines(configId: number): Promise<{ type: string; message: string }[]> {
    const { rows } = await pool.query<{ type: string; message: string }>(
      'SELECT type, message FROM plugin_log_entries WHERE plugin_config_id = $1 ORDER BY timestamp',
      [configId],
    );
    return rows;
  }

  it.each([
    ['a sync processEvent', 'processEvent', `exports.processEvent = () => { while (true) {} };`],
    ['an async onEvent', 'onEvent', `exports.onEvent = async (event) => { while (true) {} };`],
    [
      'an async onEvent that catches its interruption',
      'onEvent',
      `const spin = async () => { while (true) {} };
       exports.onEvent = async (event) => { for (;;) { try { await spin(); } catch (error) {} } };`,
    ],
  ] as const)(
    'runs a busy app (%s) off the main thread, backs it off after a timeout, counts what it skips, and disables it after repeated timeouts',
    async (_which, method, code) => {
      const runtime = createAppsRuntime(
        pool,
        { ...config(), callCpuMs: 100, timeoutBackoffMs: 300, timeoutsBeforeDisable: 3 },
        logger,
      );
      runtimes.push(runtime);
      const configId = await installApp(code, {}, { methods: [method] });
      const app = await runtime.apps.forConfig(configId);
      if (!app) throw new Error('the app did not start');

      let ticks = 0;
      const ticker = setInterval(() => (ticks += 1), 5);
      const first: unknown = await app.call(method, {}).catch((error: unknown) => error);
      clearInterval(ticker);
      expect(first).toBeInstanceOf(SandboxTimeoutError);
      expect((first as Error).message).toBe(`${method} used more than 100 ms of CPU`);
      // The loop ran on a sandbox thread: this thread's timers went on meanwhile.
      expect(ticks).toBeGreaterThan(0);

      const kinds: string[] = ['timeout'];
      const deadline = Date.now() + 30_000;
      while (!app.disabled && Date.now() < deadline) {
        const error: unknown = await app.call(method, {}).catch((caught: unknown) => caught);
        kinds.push(
          error instanceof AppSkippedError
            ? 'skipped'
            : error instanceof SandboxTimeoutError
              ? 'timeout'
              : String(error),
        );
        await sleep(50);
      }
      expect(app.disabled).toBe(true);
      expect(kinds.filter((kind) => kind === 'timeout')).toHaveLength(3);
      expect(kinds[1]).toBe('skipped');
      expect(kinds.every((kind) => kind === 'timeout' || kind === 'skipped')).toBe(true);
      await expect(app.call(method, {})).rejects.toThrow(
        `the app was disabled: 3 calls in a row timed out (the last: ${method} used more than 100 ms of CPU)`,
      );

      const { rows: configs } = await pool.query<{ enabled: boolean; error: { message: string } }>(
        'SELECT enabled, error FROM plugin_configs WHERE id = $1',
        [configId],
      );
      expect(configs).toEqual([
        {
          enabled: false,
          error: expect.objectContaining({
            message: `disabled: 3 calls in a row timed out (the last: ${method} used more than 100 ms of CPU)`,
          }) as unknown,
        },
      ]);
      await expect(runtime.apps.forConfig(configId)).resolves.toBeUndefined();
      await runtime.log.flush();
      const lines = await logLines(configId);
      expect(lines[0]).toEqual({
        type: 'WARN',
        message: `${method} timed out (${method} used more than 100 ms of CPU), 1 in a row: the app's calls are skipped for 0.3 s; after 3 in a row it is disabled`,
      });
      expect(lines).toContainEqual({
        type: 'WARN',
        message: expect.stringMatching(
          /^\d+ calls skipped while the app backed off after timeouts$/,
        ) as unknown,
      });
      expect(lines[lines.length - 1]).toEqual({
        type: 'ERROR',
        message: `The app was disabled: 3 calls in a row timed out (the last: ${method} used more than 100 ms of CPU). Fix it, then enable it again.`,
      });
      await disableAll();
    },
  );

  it('counts a timeout while the app loads again after a broken sandbox, and disables an app whose setupPlugin keeps timing out', async () => {
    const runtime = createAppsRuntime(
      pool,
      { ...config(), callCpuMs: 100, timeoutBackoffMs: 200, timeoutsBeforeDisable: 3 },
      logger,
    );
    runtimes.push(runtime);
    // Starts once; from then on every start (after the first onEvent broke the sandbox) loops.
    const configId = await installApp(
      `exports.setupPlugin = async ({ storage }) => {
         if (await storage.get('started')) { while (true) {} }
         await storage.set('started', true);
       };
       exports.onEvent = async (event) => { while (true) {} };`,
      {},
      { methods: ['setupPlugin', 'onEvent'] },
    );
    const app = await runtime.apps.forConfig(configId);
    if (!app) throw new Error('the app did not start');

    const messages: string[] = [];
    const deadline = Date.now() + 30_000;
    while (!app.disabled && Date.now() < deadline) {
      const error: unknown = await app.call('onEvent', {}).catch((caught: unknown) => caught);
      if (error instanceof SandboxTimeoutError) messages.push(error.message);
      else if (!(error instanceof AppSkippedError)) throw error;
      await sleep(50);
    }
    expect(app.disabled).toBe(true);
    expect(messages).toEqual([
      'onEvent used more than 100 ms of CPU',
      'setupPlugin used more than 100 ms of CPU',
      'setupPlugin used more than 100 ms of CPU',
    ]);
    await runtime.log.flush();
    const lines = await logLines(configId);
    expect(lines).toContainEqual({
      type: 'WARN',
      message:
        "the app's start before onEvent timed out (setupPlugin used more than 100 ms of CPU), 2 in a row: the app's calls are skipped for 0.4 s; after 3 in a row it is disabled",
    });
    expect(lines).toContainEqual({
      type: 'ERROR',
      message:
        'The app was disabled: 3 calls in a row timed out (the last: setupPlugin used more than 100 ms of CPU). Fix it, then enable it again.',
    });
    await disableAll();
  });

  it('keeps an app that replaces JSON, Promise and Array builtins to its own calls: the other apps and the host go on', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const runtime = createAppsRuntime(pool, config(), logger);
      runtimes.push(runtime);
      const hostile = await installApp(
        `JSON.stringify = () => ({ not: 'json' });
         JSON.parse = () => { throw new Error('parse replaced'); };
         Promise.prototype.then = function () { return 42; };
         Array.prototype.concat = () => { throw new Error('concat replaced'); };
         Object.assign = () => { throw new Error('assign replaced'); };
         exports.processEvent = (event) =>
           event.properties.poison
             ? { toJSON() { throw new Error('no JSON for this one'); } }
             : { ...event, properties: { ...event.properties, hostile: 'still works' } };`,
        {},
        { methods: ['processEvent'] },
      );
      await installApp(
        `exports.processEvent = (event) => ({ ...event, properties: { ...event.properties, polite: true } });`,
        {},
        { methods: ['processEvent'] },
      );
      const transformations = new AppTransformations(pool, runtime.apps, logger, new Registry());
      const captured = (properties: Record<string, unknown>) => testCapturedEvent(teamId, properties);
      const plain = await transformations.transform(captured({ page: 1 }));
      expect(JSON.parse(plain?.data ?? '{}')).toMatchObject({
        properties: { page: 1, hostile: 'still works', polite: true },
      });
      const poisoned = captured({ page: 2, poison: true });
      const transformed = await transformations.transform(poisoned);
      expect(JSON.parse(transformed?.data ?? '{}')).toMatchObject({ properties: { page: 2, polite: true } });

      await runtime.log.flush();
      expect(await logLines(hostile)).toEqual([
        { type: 'ERROR', message: `processEvent failed for event ${poisoned.uuid}: no JSON for this one` },
      ]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
      await disableAll();
    }
  });

  it('refuses meta.cache and meta.storage writes past their budgets inside the app, naming the budget', async () => {
    const runtime = createAppsRuntime(pool, config(), logger);
    runtimes.push(runtime);
    const configId = await installApp(
      `exports.runEveryMinute = async (meta) => {
         const outcome = (promise) => promise.then(() => 'stored', (error) => error.message);
         const results = {};
         results.cacheHuge = await outcome(meta.cache.set('huge', 'x'.repeat(2 * 1024 * 1024)));
         results.cacheFirst = await outcome(meta.cache.set('first', 'x'.repeat(600 * 1024)));
         results.cacheSecond = await outcome(meta.cache.set('second', 'x'.repeat(600 * 1024)));
         results.storageValue = await outcome(meta.storage.set('value', 'x'.repeat(100 * 1024)));
         results.storageKey = await outcome(meta.storage.set('k'.repeat(300), 1));
         results.stored = 0;
         for (let index = 0; index < 40; index++) {
           const stored = await outcome(meta.storage.set('chunk' + index, 'x'.repeat(60 * 1024)));
           if (stored !== 'stored') { results.storageFull = stored; break; }
           results.stored += 1;
         }
         await meta.storage.del('chunk0');
         results.afterDelete = await outcome(meta.storage.set('chunk-again', 'x'.repeat(60 * 1024)));
         return results;
       };`,
      {},
    );
    const app = await runtime.apps.forConfig(configId);
    const results = (await app?.call('runEveryMinute')) as Record<string, unknown>;
    expect(results).toEqual({
      cacheHuge: expect.stringMatching(
        /^meta\.cache refused a value of \d+ bytes: larger than this app's cache budget of 1048576 bytes \(APPS_CACHE_MB_PER_APP\)$/,
      ) as unknown,
      cacheFirst: 'stored',
      cacheSecond: expect.stringMatching(
        /^meta\.cache is full: this app's keys hold \d+ of its 1048576 bytes \(APPS_CACHE_MB_PER_APP\); delete keys or give them a TTL$/,
      ) as unknown,
      storageValue:
        'meta.storage refused a value of 102402 bytes: the largest is 65536 bytes (APPS_STORAGE_VALUE_MAX_KB)',
      storageKey: 'meta.storage keys are at most 200 characters (this one has 300)',
      stored: 17,
      storageFull: expect.stringMatching(
        /^meta\.storage is full: this config's keys hold \d+ of its 1048576 bytes \(APPS_STORAGE_MB_PER_CONFIG\); delete keys to make room$/,
      ) as unknown,
      afterDelete: 'stored',
    });
    // The trigger's running total is the sum of the rows: the check never has to add them up.
    const { rows } = await pool.query<{ counted: string; actual: string }>(
      `SELECT (SELECT bytes FROM plugin_storage_usage WHERE plugin_config_id = $1) AS counted,
              (SELECT sum(octet_length(key) + octet_length(value::text)) FROM plugin_storage WHERE plugin_config_id = $1) AS actual`,
      [configId],
    );
    expect(rows[0].counted).toBe(rows[0].actual);
    expect(Number(rows[0].counted)).toBeLessThanOrEqual(1024 * 1024);
    await disableAll();
  });

  it('keeps the apps’ sandboxes within APPS_SANDBOXES_MEMORY_MB: the least recently used app is unloaded and loads again at its next call', async () => {
    const runtime = createAppsRuntime(
      pool,
      { ...config(), memoryLimitBytes: 32 * 1024 * 1024, sandboxesMemoryBytes: 64 * 1024 * 1024 },
      logger,
    );
    runtimes.push(runtime);
    const code = `
      exports.setupPlugin = async (meta) => { await meta.utils.cursor.increment('setups'); };
      exports.runEveryMinute = async (meta) => meta.utils.cursor.increment('setups', 0);`;
    const ids = [await installApp(code, {}), await installApp(code, {}), await installApp(code, {})];
    const [first, second] = [await runtime.apps.forConfig(ids[0]), await runtime.apps.forConfig(ids[1])];
    await expect(first?.call('runEveryMinute')).resolves.toBe(1);
    await expect(second?.call('runEveryMinute')).resolves.toBe(1);
    // A third app needs room: the first (used least recently) is unloaded for it.
    const third = await runtime.apps.forConfig(ids[2]);
    await expect(third?.call('runEveryMinute')).resolves.toBe(1);
    // Its next call loads it again (setupPlugin runs again), unloading the second in turn.
    await expect(first?.call('runEveryMinute')).resolves.toBe(2);
    await expect(third?.call('runEveryMinute')).resolves.toBe(1);
    await disableAll();
  });
});
