import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import pino from 'pino';
import { openDataSource } from '@hogbase/postgres';
import { InProcessBus } from '@hogbase/queue';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import { buildCaptureApp } from '../capture.app';
import { createFlagServices } from '../flags/flag-services.util';
import { createCapturePool } from '../postgres-pool.util';
import { ProjectTokenCache } from '../project-token.cache';
import { listenOnLoopback, TEST_CAPTURE_OPTIONS } from '../testing/capture-app-for-test.util';
import { RemoteConfigCache } from '../remote-config/remote-config.cache';
import { SiteAppsCache } from './site-apps.cache';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';
const TOKEN = 'phc_site_apps';
const WEB_TOKEN = 'web-token-0123456789abcdef';

// What the install stores for a site.ts: the CommonJS module wrapped in a function expression.
const TRANSPILED = `(function () { let exports = {};
  "use strict";
  exports.inject = function ({ config, posthog }) {
    window.injected.push({ config, posthog });
  };
  return exports; })`;

const CONFIG_SCHEMA = [
  { key: 'greeting', type: 'string', site: true },
  { key: 'colour', type: 'choice', choices: ['red', 'blue'], default: 'blue', site: true },
  { key: 'serverOnly', type: 'string' },
  { key: 'apiKey', type: 'string', secret: true, site: true },
];

interface Link {
  id: number;
  url: string;
  type: string;
}

interface Injected {
  config: Record<string, unknown>;
  posthog: unknown;
}

/** Runs a served script as a page would, with `window` its global object; returns what inject saw. */
function runScript(script: string, window: Record<string, unknown> = {}): Injected[] {
  const injected: Injected[] = [];
  const sandbox: Record<string, unknown> = { ...window, injected };
  sandbox.window = sandbox;
  runInNewContext(script, sandbox);
  return injected;
}

describe('site apps served by capture', () => {
  let database: TestDatabase;
  let pool: Pool;
  let app: FastifyInstance;
  let baseUrl: string;
  let teamId: number;
  let configId: number;
  let clock = 0;

  beforeEach(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Org', 'org')`, [
      ORGANIZATION,
    ]);
    [{ id: teamId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO teams (uuid, organization_id, name, api_token, inject_web_apps)
       VALUES ('00000000-0000-4000-8000-000000000002', $1, 'Web', $2, true) RETURNING id`,
      [ORGANIZATION, TOKEN],
    );
    const [{ id: pluginId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO plugins (organization_id, plugin_type, name, config_schema, capabilities)
       VALUES ($1, 'source', 'Greeter', $2, '{}') RETURNING id`,
      [ORGANIZATION, JSON.stringify(CONFIG_SCHEMA)],
    );
    await dataSource.query(
      `INSERT INTO plugin_source_files (plugin_id, filename, source, transpiled, status)
       VALUES ($1, 'site.ts', 'export function inject() {}', $2, 'TRANSPILED')`,
      [pluginId, TRANSPILED],
    );
    [{ id: configId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO plugin_configs (plugin_id, team_id, enabled, config, web_token)
       VALUES ($1, $2, true, $3, $4) RETURNING id`,
      [
        pluginId,
        teamId,
        JSON.stringify({ greeting: 'hello', serverOnly: 'not for pages', apiKey: { sealed: 'v1:abc' } }),
        WEB_TOKEN,
      ],
    );
    await dataSource.destroy();

    pool = createCapturePool(database.url, { warn: () => undefined }, 2);
    clock = 1_000_000;
    const logger = pino({ level: 'silent' });
    const cacheTimes = { ttlMs: 10_000, retryAfterFailureMs: 1_000 };
    const siteApps = new SiteAppsCache(pool, cacheTimes, () => clock);
    ({ app } = buildCaptureApp({
      publisher: new InProcessBus(),
      tokens: new ProjectTokenCache(pool),
      flags: createFlagServices(pool),
      siteApps,
      remoteConfig: new RemoteConfigCache(pool, siteApps, cacheTimes, () => clock),
      logger,
      ...TEST_CAPTURE_OPTIONS,
    }));
    baseUrl = await listenOnLoopback(app);
  });

  afterEach(async () => {
    await app.close();
    await pool.end().catch(() => undefined);
    await database.drop();
  });

  const decide = async (token = TOKEN): Promise<{ status: number; siteApps: Link[] }> => {
    const response = await fetch(`${baseUrl}/decide/?v=3`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token, distinct_id: 'visitor' }),
    });
    const body = (await response.json()) as { siteApps: Link[] };
    return { status: response.status, siteApps: body.siteApps };
  };

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${baseUrl}${path}`, { headers });

  it('lists the enabled site app in /decide and in /flags?config=true, and not in a plain /flags', async () => {
    const { status, siteApps } = await decide();
    expect(status).toBe(200);
    expect(siteApps).toEqual([
      {
        id: configId,
        url: expect.stringMatching(new RegExp(`^/site_app/${configId}/${WEB_TOKEN}/[0-9a-f]{32}/$`)),
        type: 'site_app',
      },
    ]);

    const flagsRequest = (query: string) =>
      fetch(`${baseUrl}/flags/?${query}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ token: TOKEN, distinct_id: 'visitor' }),
      }).then((response) => response.json() as Promise<{ siteApps?: Link[] }>);
    expect((await flagsRequest('v=2&config=true')).siteApps).toEqual(siteApps);
    expect((await flagsRequest('v=2')).siteApps).toBeUndefined();
  });

  it('serves the script of the URL it lists, which injects the site config into the posthog posthog-js put on window', async () => {
    const [link] = (await decide()).siteApps;
    const response = await get(link.url, { Origin: 'https://shop.example' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/javascript/);
    // posthog-js adds it with crossorigin="anonymous": without this header the page cannot run it.
    expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const script = await response.text();

    const posthog = { name: 'the posthog instance' };
    const injected = runScript(script, { [`__$$ph_site_app_${configId}`]: posthog });
    expect(injected).toEqual([{ config: { greeting: 'hello', colour: 'blue' }, posthog }]);
  });

  it('never serves a value that is not marked site, nor a secret one marked site', async () => {
    const [link] = (await decide()).siteApps;
    const script = await (await get(link.url)).text();
    expect(script).not.toContain('not for pages');
    expect(script).not.toContain('sealed');
    expect(script).not.toContain('v1:abc');
    const config = await (await get(`/array/${TOKEN}/config.js`)).text();
    expect(config).not.toContain('sealed');
    expect(config).not.toContain('not for pages');
  });

  it('answers 404 with a small body for a wrong web token, an unknown id, or an id that is not a number', async () => {
    for (const path of [
      `/site_app/${configId}/wrong-token/0123/`,
      `/site_app/${configId + 1}/${WEB_TOKEN}/0123/`,
      `/site_app/abc/${WEB_TOKEN}/0123/`,
      `/site_app/99999999999999999999/${WEB_TOKEN}/0123/`,
    ]) {
      const response = await get(path);
      const body = await response.text();
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(JSON.parse(body)).toEqual({
        type: 'server_error',
        code: 'missing_site_app_source',
        detail: 'Unable to serve site app source code.',
        attr: 'site_app',
      });
    }
  });

  it("answers a token with a NUL byte as nobody's (401 on /flags, 404 on the config and site app), never as an outage", async () => {
    const flags = await fetch(`${baseUrl}/flags/?v=2`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: `${TOKEN}\u0000`, distinct_id: 'visitor' }),
    });
    expect([flags.status, ((await flags.json()) as { code: string }).code]).toEqual([401, 'invalid_api_key']);
    for (const path of [
      `/array/${TOKEN}%00/config`,
      `/array/${TOKEN}%00/config.js`,
      `/site_app/${configId}/${WEB_TOKEN}%00/0123/`,
    ]) {
      const response = await get(path);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
    }
    // Postgres answered all along: the next token never seen is looked up, not refused as an outage.
    expect((await decide('phc_never_seen')).status).toBe(401);
  });

  it('offers nothing once the project turns inject_web_apps off, the config is disabled or deleted (after the cache TTL)', async () => {
    const [link] = (await decide()).siteApps;
    for (const [change, undo] of [
      [`UPDATE teams SET inject_web_apps = false`, `UPDATE teams SET inject_web_apps = true`],
      [`UPDATE plugin_configs SET enabled = false`, `UPDATE plugin_configs SET enabled = true`],
      [`UPDATE plugin_configs SET deleted = true`, `UPDATE plugin_configs SET deleted = false`],
      [
        `UPDATE plugin_source_files SET status = 'ERROR'`,
        `UPDATE plugin_source_files SET status = 'TRANSPILED'`,
      ],
    ]) {
      await pool.query(change);
      clock += 10_001;
      expect({ change, siteApps: (await decide()).siteApps }).toEqual({ change, siteApps: [] });
      expect({ change, status: (await get(link.url)).status }).toEqual({ change, status: 404 });
      await pool.query(undo);
      clock += 10_001;
      expect((await decide()).siteApps).toEqual([link]);
    }
  });

  it('gives the app a new URL when its config or its code changes', async () => {
    const [first] = (await decide()).siteApps;
    await pool.query(`UPDATE plugin_configs SET config = config || '{"greeting": "bonjour"}'`);
    clock += 10_001;
    const [second] = (await decide()).siteApps;
    expect(second.url).not.toBe(first.url);
    expect(runScript(await (await get(second.url)).text())[0].config).toEqual({
      greeting: 'bonjour',
      colour: 'blue',
    });

    await pool.query(`UPDATE plugin_source_files SET transpiled = replace(transpiled, 'push', 'unshift')`);
    clock += 10_001;
    const [third] = (await decide()).siteApps;
    expect(third.url).not.toBe(second.url);
  });

  it("serves a config of another organization's app the site code and schema it pinned, not the app's current ones", async () => {
    // What the management API leaves for such a config: a copy taken when its admin enabled it.
    await pool.query(
      `UPDATE plugin_configs SET code_pinned_at = now(), pinned_site_code = $1, pinned_config_schema = $2`,
      [
        TRANSPILED.replace('push({ config, posthog })', 'push({ config, posthog, pinned: true })'),
        JSON.stringify(CONFIG_SCHEMA.slice(0, 1)),
      ],
    );
    await pool.query(`UPDATE plugin_source_files SET transpiled = replace(transpiled, 'push', 'unshift')`);
    const [link] = (await decide()).siteApps;
    const injected = runScript(await (await get(link.url)).text());
    expect(injected).toEqual([{ config: { greeting: 'hello' }, posthog: undefined, pinned: true }]);
  });

  it('answers the JSON remote config of /array/:token/config with the site app links, and 404 for an unknown token', async () => {
    const response = await get(`/array/${TOKEN}/config`, { Origin: 'https://shop.example' });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const config = (await response.json()) as { token: string; siteApps: Link[] };
    expect(config.token).toBe(TOKEN);
    expect(config.siteApps).toEqual((await decide()).siteApps);

    expect((await get('/array/phc_unknown/config')).status).toBe(404);
    expect((await get('/array/phc_unknown/config.js')).status).toBe(404);
  });

  it('answers /array/:token/config.js with a loader per app that posthog-js inits with its instance', async () => {
    const response = await get(`/array/${TOKEN}/config.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/javascript/);
    const sandbox: Record<string, unknown> = { injected: [] };
    sandbox.window = sandbox;
    runInNewContext(await response.text(), sandbox);
    const remote = (sandbox._POSTHOG_REMOTE_CONFIG as Record<string, unknown>)[TOKEN] as {
      config: Record<string, unknown>;
      siteApps: {
        id: string;
        init(config: { posthog: unknown; callback(success: boolean): void }): unknown;
      }[];
    };
    // The links travel in the JSON config only; here the code itself does.
    expect(remote.config.siteApps).toBeUndefined();
    expect(remote.config.token).toBe(TOKEN);
    expect(remote.siteApps.map((loader) => loader.id)).toEqual([String(configId)]);

    const posthog = { name: 'the posthog instance' };
    const callbacks: boolean[] = [];
    remote.siteApps[0].init({ posthog, callback: (success) => callbacks.push(success) });
    expect(sandbox.injected).toEqual([{ config: { greeting: 'hello', colour: 'blue' }, posthog }]);
    expect(callbacks).toEqual([true]);
  });

  it('keeps serving what it read while Postgres is down, and answers 503 for what it never read', async () => {
    const [link] = (await decide()).siteApps;
    expect((await get(link.url)).status).toBe(200);
    // The token is known from here on, the project's site apps for /array are read already by /decide.
    await database.drop();
    clock += 10_001;

    expect((await decide()).siteApps).toEqual([link]);
    expect((await get(link.url)).status).toBe(200);
    expect((await get(`/array/${TOKEN}/config.js`)).status).toBe(200);

    const unread = await get(`/site_app/${configId}/another-token/0123/`);
    expect(unread.status).toBe(503);
    expect(await unread.json()).toEqual({
      type: 'server_error',
      code: 'service_unavailable',
      detail: 'Transient error, please retry.',
      attr: null,
    });
    expect((await get('/array/phc_never_seen/config.js')).status).toBe(503);
  });
});
