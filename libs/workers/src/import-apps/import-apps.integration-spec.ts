import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import pino from 'pino';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { loadWorkersConfig, SecretBox } from '@hogbase/config';
import type { CapturedEvent } from '@hogbase/event-contract';
import { createMigratedTestDatabase, type MigratedTestDatabase } from '@hogbase/postgres/testing';
import { InProcessBus } from '@hogbase/queue';
import type { RunningService } from '@hogbase/service-runtime';
import { eventually, insertEnabledAppRows, insertProjectRows } from '@hogbase/test-support';
import { startWorkersService } from '../workers.service';

jest.setTimeout(120_000);

const TICK_MS = 1_000;
const PAGE_SIZE = 3;

/** A paged loopback API: `/items?page=N` answers the items of page N among the first `available`. */
interface ItemsApi {
  url: string;
  available: number;
  /** Page numbers asked for, in order. */
  pagesAsked: number[];
  /** Requests to `/slow` in flight now, and the most there ever were at once. */
  slowInFlight: number;
  slowMostAtOnce: number;
  slowRequests: number;
  server: Server;
}

async function startItemsApi(): Promise<ItemsApi> {
  const api = {
    available: 0,
    pagesAsked: [],
    slowInFlight: 0,
    slowMostAtOnce: 0,
    slowRequests: 0,
  } as unknown as ItemsApi;
  api.server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname === '/items') {
      const page = Number(url.searchParams.get('page'));
      api.pagesAsked.push(page);
      const items = [];
      for (let id = page * PAGE_SIZE + 1; id <= Math.min((page + 1) * PAGE_SIZE, api.available); id++) {
        items.push({ id, name: `item ${id}` });
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ items }));
    } else if (url.pathname === '/slow') {
      api.slowRequests += 1;
      api.slowInFlight += 1;
      api.slowMostAtOnce = Math.max(api.slowMostAtOnce, api.slowInFlight);
      setTimeout(() => {
        api.slowInFlight -= 1;
        response.writeHead(200).end('{}');
      }, 2_500);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  return api;
}

/** An import app as the installer stores it: it pages the API with its cursor in `meta.storage`. */
const PAGING_APP = `
exports.runEveryMinute = async ({ config, storage }) => {
  const page = await storage.get('page', 0);
  const response = await fetch(config.url + '/items?page=' + page);
  const { items } = await response.json();
  if (items.length === 0) return;
  for (const item of items) {
    await posthog.capture('imported item', { distinct_id: 'customer-' + item.id, item: item.id, name: item.name });
  }
  await storage.set('page', page + 1);
};`;

describe('import apps on the workers: scheduled tasks and app jobs on pg-boss', () => {
  let database: MigratedTestDatabase;
  let clickhouse: TestClickHouse;
  let pool: Pool;
  let api: ItemsApi;
  let organizationId: string;
  let teamId: number;
  let apiToken: string;
  const secrets = new SecretBox([randomBytes(32)]);
  const services: RunningService[] = [];
  /** What the workers published, as ingestion would consume it. */
  const published: CapturedEvent[] = [];
  const bus = new InProcessBus();

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    pool = database.pool;
    ({ organizationId, teamId, apiToken } = await insertProjectRows(pool, 'Imports'));
    clickhouse = await createTestClickHouse({ migrate: false });
    api = await startItemsApi();
    await bus.start((batch) => {
      for (const message of batch.messages) published.push(JSON.parse(message.value) as CapturedEvent);
      return Promise.resolve();
    });
  });

  afterEach(async () => {
    for (const service of services.splice(0)) await service.stop();
    await pool.query('UPDATE plugin_configs SET enabled = false');
  });

  afterAll(async () => {
    await bus.stop();
    await new Promise((resolve) => api?.server.close(resolve));
    await clickhouse?.drop();
    await database?.close();
  });

  async function startWorkers(): Promise<RunningService> {
    const config = {
      ...loadWorkersConfig({
        DATABASE_URL: database.url,
        APPS_TIME_LIMIT_MS: '4000',
        // A timed-out run is replaced at the next tick here, not skipped while the app backs off.
        APPS_TIMEOUT_BACKOFF_MS: '0',
        // The apps' API server of these tests listens on loopback.
        EGRESS_ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
      }),
      clickhouse: { ...loadWorkersConfig({}).clickhouse, database: clickhouse.database },
    };
    const service = await startWorkersService(
      config,
      {
        pool,
        databaseUrl: database.url,
        clickhouse: clickhouse.client,
        ingestion: bus,
        secrets,
        destinations: {},
        publisher: bus,
        logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      },
      { appsTickMs: TICK_MS },
    );
    services.push(service);
    await eventually('the workers to be ready', async () => (await service.ready()).ready);
    return service;
  }

  async function stopWorkers(service: RunningService): Promise<void> {
    services.splice(services.indexOf(service), 1);
    await service.stop();
  }

  /** Installs `code` as an import app with these capabilities and enables it for the project. */
  async function installApp(
    code: string,
    capabilities: { methods?: string[]; jobs?: string[]; scheduled_tasks?: string[] },
  ): Promise<number> {
    return insertEnabledAppRows(pool, {
      organizationId,
      teamId,
      code,
      config: { url: api.url },
      capabilities: { methods: [], jobs: [], scheduled_tasks: [], ...capabilities },
      name: 'Items import',
    });
  }

  async function logOf(configId: number, type: string): Promise<string[]> {
    const { rows } = await pool.query<{ message: string }>(
      'SELECT message FROM plugin_log_entries WHERE plugin_config_id = $1 AND type = $2 ORDER BY timestamp',
      [configId, type],
    );
    return rows.map((row) => row.message);
  }

  async function metricValue(service: RunningService, name: string, labels: Record<string, string>) {
    const metric = await service.metrics.getSingleMetric(name)?.get();
    const match = metric?.values.find((value) =>
      Object.entries(labels).every(([key, wanted]) => value.labels[key] === wanted),
    );
    return match?.value ?? 0;
  }

  const itemsOf = (events: CapturedEvent[]) =>
    events
      .filter((event) => event.event === 'imported item')
      .map((event) => (JSON.parse(event.data) as { properties: { item: number } }).properties.item)
      .sort((a, b) => a - b);

  it('pages a loopback API on runEveryMinute, capturing each item once, and resumes from its cursor after a restart', async () => {
    api.available = 2 * PAGE_SIZE;
    const configId = await installApp(PAGING_APP, { scheduled_tasks: ['runEveryMinute'] });
    let workers = await startWorkers();
    await eventually('the first two pages', () => itemsOf(published).length === 2 * PAGE_SIZE);
    // It has reached the end: it asks for the third page, which is still empty, on each tick.
    await eventually('an empty page twice', () => api.pagesAsked.filter((page) => page === 2).length >= 2);
    await stopWorkers(workers);

    api.available = 4 * PAGE_SIZE;
    const asked = api.pagesAsked.length;
    workers = await startWorkers();
    await eventually('the two new pages', () => itemsOf(published).length === 4 * PAGE_SIZE);
    expect(api.pagesAsked[asked]).toBe(2);
    expect(itemsOf(published)).toEqual(Array.from({ length: 4 * PAGE_SIZE }, (_, index) => index + 1));

    const first = published.find((event) => event.event === 'imported item')!;
    expect(first).toMatchObject({
      distinct_id: 'customer-1',
      team_id: teamId,
      token: apiToken,
      ip: null,
      sent_at: null,
      uuid: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/),
    });
    expect(Date.parse(first.timestamp)).not.toBeNaN();
    expect(JSON.parse(first.data)).toEqual({
      event: 'imported item',
      distinct_id: 'customer-1',
      uuid: first.uuid,
      timestamp: first.timestamp,
      properties: { distinct_id: 'customer-1', item: 1, name: 'item 1', $lib: 'posthog-plugin-server' },
    });
    expect(
      await metricValue(workers, 'import_app_scheduled_task_runs_total', { outcome: 'ok' }),
    ).toBeGreaterThan(0);
    expect(await metricValue(workers, 'import_app_captured_events_total', {})).toBe(2 * PAGE_SIZE);
    const { rows } = await pool.query<{ value: unknown }>(
      `SELECT value FROM plugin_storage WHERE plugin_config_id = $1 AND key = 'page'`,
      [configId],
    );
    expect(rows).toEqual([{ value: 4 }]);
  });

  it('runs a job an app enqueued with runIn, with its payload and meta', async () => {
    await installApp(
      `
      exports.jobs = {
        followUp: async (payload, { config }) => {
          await posthog.capture('followed up', { distinct_id: 'follower', step: payload.step, url: config.url });
        },
      };
      exports.runEveryMinute = async ({ storage, jobs }) => {
        if (await storage.get('enqueued', false)) return;
        await storage.set('enqueued', true);
        await jobs.followUp({ step: 7 }).runIn(1, 'seconds');
      };`,
      { jobs: ['followUp'], scheduled_tasks: ['runEveryMinute'] },
    );
    const workers = await startWorkers();
    const followed = await eventually('the job to run', () => {
      const events = published.filter((event) => event.event === 'followed up');
      return events.length > 0 ? events : undefined;
    });
    expect(followed).toHaveLength(1);
    expect((JSON.parse(followed[0].data) as { properties: unknown }).properties).toEqual({
      distinct_id: 'follower',
      step: 7,
      url: api.url,
      $lib: 'posthog-plugin-server',
    });
    await eventually(
      'the job metric',
      async () => (await metricValue(workers, 'import_app_jobs_total', { outcome: 'ok' })) === 1,
    );
  });

  it('logs an app that throws to its config and still runs it at the next tick; a broken sandbox is replaced', async () => {
    const configId = await installApp(
      `
      exports.runEveryMinute = async ({ utils }) => {
        const run = await utils.cursor.increment('runs', 1);
        if (run === 1) throw new Error('the API key was refused');
        if (run === 2) { while (true) {} }
        await posthog.capture('recovered', { distinct_id: 'importer', run });
      };`,
      { scheduled_tasks: ['runEveryMinute'] },
    );
    const workers = await startWorkers();
    await eventually(
      'a run after the failures',
      () => published.some((event) => event.event === 'recovered'),
      { timeoutMs: 60_000 },
    );
    const errors = await eventually('the errors in the config log', async () => {
      const lines = await logOf(configId, 'ERROR');
      return lines.length >= 2 ? lines : undefined;
    });
    expect(errors[0]).toBe('runEveryMinute failed: the API key was refused');
    expect(errors[1]).toBe('runEveryMinute failed: runEveryMinute used more than 1000 ms of CPU');
    expect(
      await metricValue(workers, 'import_app_scheduled_task_runs_total', {
        task: 'runEveryMinute',
        outcome: 'failed',
      }),
    ).toBe(2);
  });

  it('never runs a config’s task twice at once, nor one tick twice with two workers', async () => {
    const configId = await installApp(
      `exports.runEveryMinute = async ({ config }) => { await fetch(config.url + '/slow'); };`,
      { scheduled_tasks: ['runEveryMinute'] },
    );
    const startedAt = Date.now();
    const [one, two] = [await startWorkers(), await startWorkers()];
    await eventually('three slow runs', () => api.slowRequests >= 3, { timeoutMs: 60_000 });
    await stopWorkers(one);
    await stopWorkers(two);
    const endedAt = Date.now();
    expect(api.slowMostAtOnce).toBe(1);
    // Each run takes 2.5 ticks: without the exclusive key, every tick would start one (two, with two workers).
    const ticks = Math.floor(endedAt / TICK_MS) - Math.floor(startedAt / TICK_MS) + 1;
    expect(api.slowRequests).toBeLessThan(ticks / 2);
    const busy =
      (await metricValue(one, 'import_app_scheduled_ticks_busy_total', {})) +
      (await metricValue(two, 'import_app_scheduled_ticks_busy_total', {}));
    expect(busy).toBeGreaterThan(0);
    const { rows } = await pool.query<{ runs: string }>(
      `SELECT count(*) AS runs FROM pgboss.job WHERE name = 'app-scheduled-tasks' AND singleton_key = $1 AND state = 'completed'`,
      [`${configId}/runEveryMinute`],
    );
    expect(Number(rows[0].runs)).toBe(api.slowRequests);
  });
});
