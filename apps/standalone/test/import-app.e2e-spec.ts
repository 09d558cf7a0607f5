import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, npmTarball, startAppServer, type AppServer } from '@hogbase/test-support';
import {
  freePort,
  killApps,
  READY_TIMEOUT_MS,
  readInitialCredentials,
  standaloneEnv,
  startApp,
  stopApp,
  waitForReady,
  type AppProcess,
  type InitialCredentials,
} from './app-process';
import { managementApi } from './management-request';

const PAGE_SIZE = 2;

/**
 * An import app as a user installs it: an npm-style tarball whose TypeScript pages an API on
 * runEveryMinute, its cursor in meta.storage, capturing one event per item.
 */
const IMPORT_APP: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'items-import', version: '1.0.0' }),
  'plugin.json': JSON.stringify({
    name: 'Items import',
    description: 'Imports the items of an API as events',
    config: [{ key: 'apiUrl', name: 'API URL', type: 'string', required: true }],
  }),
  'index.ts': `
interface Meta {
  config: { apiUrl: string };
  storage: { get(key: string, fallback: unknown): Promise<unknown>; set(key: string, value: unknown): Promise<void> };
}
declare const posthog: { capture(event: string, properties: Record<string, unknown>): Promise<void> };

export async function runEveryMinute({ config, storage }: Meta): Promise<void> {
  const page = (await storage.get('page', 0)) as number;
  const response = await fetch(config.apiUrl + '/items/' + page);
  const { items } = (await response.json()) as { items: { id: number; sku: string }[] };
  if (items.length === 0) return;
  for (const item of items) {
    await posthog.capture('item imported', { distinct_id: 'buyer-' + item.id, item: item.id, sku: item.sku });
  }
  await storage.set('page', page + 1);
}
`,
};

/**
 * `npm start` runs an import app end to end: installed through the management API from a
 * loopback tarball, enabled for the project, paging a loopback API on a one-second tick (by
 * APPS_SCHEDULE_TICK_SECONDS), its events listed like SDK events; after a restart on the same
 * DATA_DIR it resumes at its cursor.
 */
describe('npm start: an import app pages an API and its events are listed', () => {
  let dataDir: string;
  let server: AppServer;
  let platform: AppProcess | undefined;
  let managementUrl: string;
  let credentials: InitialCredentials;
  /** Items the loopback API has; each page of PAGE_SIZE is served at /items/<page>. */
  let available = 0;
  const pagesAsked: number[] = [];

  async function startPlatform(): Promise<void> {
    const [port, capturePort] = [await freePort(), await freePort()];
    platform = startApp('standalone', {
      ...standaloneEnv(dataDir, port, capturePort),
      APPS_SCHEDULE_TICK_SECONDS: '1',
      LOG_LEVEL: 'warn',
    });
    managementUrl = `http://127.0.0.1:${port}`;
    await waitForReady(platform, managementUrl);
    await waitForReady(platform, `http://127.0.0.1:${capturePort}`);
  }

  async function stopPlatform(): Promise<void> {
    const running = platform!;
    platform = undefined;
    expect(await stopApp(running)).toEqual({ code: 0, signal: null });
  }

  // Bound at each call: the key and URL come with the platform's first start.
  const api = <T = Record<string, any>>(method: string, requestPath: string, body?: unknown) =>
    managementApi(managementUrl, credentials.personal_api_key)<T>(method, requestPath, body);

  /** The imported items the management API lists, polled until `count` are there or 60 s passed. */
  async function listedItems(
    count: number,
  ): Promise<{ distinct_id: string; properties: Record<string, any> }[]> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { results } = await api<{ results: { distinct_id: string; properties: Record<string, any> }[] }>(
        'GET',
        `/api/projects/${credentials.project_id}/events/?event=${encodeURIComponent('item imported')}&limit=100`,
      );
      if (results.length >= count || Date.now() > deadline) return results;
      await sleep(250);
    }
  }

  const itemIds = (events: { properties: Record<string, any> }[]) =>
    events.map((event) => event.properties.item as number).sort((a, b) => a - b);

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-import-app-test-'));
    server = await startAppServer();
    const tarball = await npmTarball(IMPORT_APP);
    server.routes.set('/items-import-1.0.0.tgz', () => [200, tarball]);
    for (let page = 0; page < 10; page++) {
      server.routes.set(`/items/${page}`, () => {
        pagesAsked.push(page);
        const items = [];
        for (let id = page * PAGE_SIZE + 1; id <= Math.min((page + 1) * PAGE_SIZE, available); id++) {
          items.push({ id, sku: `sku-${id}` });
        }
        return [200, JSON.stringify({ items }), 'application/json'];
      });
    }
    await startPlatform();
    credentials = await readInitialCredentials(dataDir);
  }, READY_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await killApps(platform);
    await server?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'installs the app, enables it, lists the items it captured, and resumes from its cursor after a restart',
    async () => {
      available = 2 * PAGE_SIZE;
      const installed = await api(
        'POST',
        `/api/organizations/${credentials.organization_id}/pipeline_import_apps/`,
        {
          plugin_type: 'custom',
          url: `${server.url}/items-import-1.0.0.tgz`,
        },
      );
      expect(installed.capabilities).toEqual({
        methods: [],
        jobs: [],
        scheduled_tasks: ['runEveryMinute'],
      });
      await api('POST', `/api/projects/${credentials.project_id}/plugin_configs/`, {
        plugin: installed.id,
        enabled: true,
        order: 0,
        config: { apiUrl: server.url },
      });

      const first = await listedItems(2 * PAGE_SIZE);
      expect(itemIds(first)).toEqual([1, 2, 3, 4]);
      expect(first.find((event) => event.properties.item === 1)).toMatchObject({
        distinct_id: 'buyer-1',
        properties: { sku: 'sku-1', $lib: 'posthog-plugin-server' },
      });
      // At the end of the API: it asks for the next page, still empty, on each tick.
      await eventually(
        'the empty page asked twice',
        () => pagesAsked.filter((page) => page === 2).length >= 2,
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(pagesAsked.filter((page) => page === 2).length).toBeGreaterThanOrEqual(2);

      await stopPlatform();
      available = 4 * PAGE_SIZE;
      const askedBeforeRestart = pagesAsked.length;
      await startPlatform();

      const all = await listedItems(4 * PAGE_SIZE);
      expect(itemIds(all)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      // Resumed at its cursor: the first page asked after the restart is the one it stopped at.
      expect(pagesAsked[askedBeforeRestart]).toBe(2);
      await stopPlatform();
      // Two starts of the platform and a stop: Jest's 30 s are too few on a loaded machine.
    },
    3 * READY_TIMEOUT_MS,
  );
});
