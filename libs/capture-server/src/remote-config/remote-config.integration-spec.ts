import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import type { Pool } from 'pg';
import pino from 'pino';
import { openDataSource } from '@hogbase/postgres';
import { InProcessBus } from '@hogbase/queue';
import { createTestDatabase, eventuallyPasses, type TestDatabase } from '@hogbase/test-support';
import { buildCaptureApp } from '../capture.app';
import { createFlagServices } from '../flags/flag-services.util';
import { createCapturePool } from '../postgres-pool.util';
import { ProjectChangeListener } from '../project-changes.listener';
import { ProjectTokenCache } from '../project-token.cache';
import { listenOnLoopback, TEST_CAPTURE_OPTIONS } from '../testing/capture-app-for-test.util';
import { SiteAppsCache } from '../site-apps/site-apps.cache';
import { RemoteConfigCache } from './remote-config.cache';

const ORGANIZATION = '00000000-0000-4000-8000-000000000001';
const TOKEN = 'phc_remote_config';

/** A change reaches capture as a notification at commit, a few milliseconds later. */
const NOTIFIED = { timeoutMs: 10_000, intervalMs: 50 };

describe('remote config served by capture', () => {
  let database: TestDatabase;
  let pool: Pool;
  let app: FastifyInstance;
  let listener: ProjectChangeListener;
  let baseUrl: string;
  let teamId: number;
  // Frozen: nothing expires by TTL, so every change seen below was notified.
  const clock = () => 1_000_000;

  beforeEach(async () => {
    database = await createTestDatabase();
    const dataSource = await openDataSource({ url: database.url });
    await dataSource.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Org', 'org')`, [
      ORGANIZATION,
    ]);
    [{ id: teamId }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO teams (uuid, organization_id, name, api_token)
       VALUES ('00000000-0000-4000-8000-000000000002', $1, 'Web', $2) RETURNING id`,
      [ORGANIZATION, TOKEN],
    );
    await dataSource.destroy();

    pool = createCapturePool(database.url, { warn: () => undefined }, 2);
    const logger = pino({ level: 'silent' });
    const siteApps = new SiteAppsCache(pool, {}, clock);
    const remoteConfig = new RemoteConfigCache(pool, siteApps, {}, clock);
    const tokens = new ProjectTokenCache(pool, {}, clock);
    listener = new ProjectChangeListener(pool.options, logger, { retryMs: 50 });
    listener.onChange((changed) => {
      siteApps.forget(changed);
      remoteConfig.forget(changed);
      tokens.forget(changed);
    });
    listener.start();
    await eventuallyPasses(() => expect(listener.listening).toBe(true), NOTIFIED);
    ({ app } = buildCaptureApp({
      publisher: new InProcessBus(),
      tokens,
      flags: createFlagServices(pool),
      siteApps,
      remoteConfig,
      logger,
      ...TEST_CAPTURE_OPTIONS,
    }));
    baseUrl = await listenOnLoopback(app);
  });

  afterEach(async () => {
    await app.close();
    await listener.stop();
    await pool.end().catch(() => undefined);
    await database.drop();
  });

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${baseUrl}${path}`, { headers });
  const config = async () => {
    const response = await get(`/array/${TOKEN}/config`);
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };
  const flagsWithConfig = async (path: string) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token: TOKEN, distinct_id: 'visitor' }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  it("answers PostHog's remote config for a new project: autocapture on, nothing this server does not keep", async () => {
    expect(await config()).toEqual({
      token: TOKEN,
      supportedCompression: ['gzip', 'gzip-js'],
      hasFeatureFlags: false,
      captureDeadClicks: false,
      capturePerformance: { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null },
      autocapture_opt_out: false,
      autocaptureExceptions: false,
      analytics: { endpoint: '/i/v0/e/' },
      elementsChainAsString: true,
      errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
      sessionRecording: false,
      heatmaps: false,
      surveys: false,
      defaultIdentifiedOnly: true,
      siteApps: [],
    });
  });

  it('follows the project settings as soon as they change, in the JSON, the script, /flags?config=true and /decide', async () => {
    await config();
    await pool.query(
      `UPDATE teams SET autocapture_opt_out = true, autocapture_exceptions_opt_in = true,
         autocapture_web_vitals_opt_in = true, autocapture_web_vitals_allowed_metrics = '{LCP,CLS}',
         capture_performance_opt_in = false, capture_dead_clicks = true, heatmaps_opt_in = true
       WHERE id = $1`,
      [teamId],
    );
    const expected = {
      autocapture_opt_out: true,
      autocaptureExceptions: true,
      errorTracking: { autocaptureExceptions: true, suppressionRules: [] },
      capturePerformance: {
        network_timing: false,
        web_vitals: true,
        web_vitals_allowed_metrics: ['LCP', 'CLS'],
      },
      captureDeadClicks: true,
      heatmaps: true,
      sessionRecording: false,
    };
    await eventuallyPasses(async () => expect(await config()).toMatchObject(expected), NOTIFIED);

    const sandbox: Record<string, unknown> = {};
    sandbox.window = sandbox;
    runInNewContext(await (await get(`/array/${TOKEN}/config.js`)).text(), sandbox);
    const remote = (
      sandbox._POSTHOG_REMOTE_CONFIG as Record<string, { config: unknown; siteApps: unknown[] }>
    )[TOKEN];
    expect(remote.config).toMatchObject(expected);
    expect(remote.siteApps).toEqual([]);

    for (const path of ['/flags/?v=2&config=true', '/decide/?v=3']) {
      const body = await flagsWithConfig(path);
      expect({ path, body }).toMatchObject({
        path,
        body: {
          ...expected,
          config: { enable_collect_everything: true },
          toolbarParams: {},
          isAuthenticated: false,
        },
      });
      expect(body.token).toBeUndefined();
    }
    // A plain /flags call carries no config.
    expect((await flagsWithConfig('/flags/?v=2')).autocapture_opt_out).toBeUndefined();

    await pool.query(
      `UPDATE teams SET capture_performance_opt_in = false, autocapture_web_vitals_opt_in = false`,
    );
    await eventuallyPasses(async () => expect((await config()).capturePerformance).toBe(false), NOTIFIED);
  });

  it('tells posthog-js whether the project has an active flag, as flags are created, disabled and deleted', async () => {
    expect((await config()).hasFeatureFlags).toBe(false);
    const {
      rows: [{ id: flagId }],
    } = await pool.query<{ id: number }>(
      `INSERT INTO feature_flags (team_id, key, filters) VALUES ($1, 'beta', '{"groups":[]}') RETURNING id`,
      [teamId],
    );
    await eventuallyPasses(async () => expect((await config()).hasFeatureFlags).toBe(true), NOTIFIED);
    await pool.query(`UPDATE feature_flags SET active = false WHERE id = $1`, [flagId]);
    await eventuallyPasses(async () => expect((await config()).hasFeatureFlags).toBe(false), NOTIFIED);
    await pool.query(`UPDATE feature_flags SET active = true WHERE id = $1`, [flagId]);
    await eventuallyPasses(async () => expect((await config()).hasFeatureFlags).toBe(true), NOTIFIED);
    await pool.query(`UPDATE feature_flags SET deleted = true WHERE id = $1`, [flagId]);
    await eventuallyPasses(async () => expect((await config()).hasFeatureFlags).toBe(false), NOTIFIED);
  });

  it('carries an ETag on both forms and answers a matching If-None-Match with an empty 304 until the project changes', async () => {
    for (const path of [`/array/${TOKEN}/config`, `/array/${TOKEN}/config.js`]) {
      const first = await get(path);
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"[\w-]+"$/);
      expect(first.headers.get('cache-control')).toBe('public, no-cache');
      await first.text();

      const again = await get(path, { 'If-None-Match': etag! });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe('');
      // A compressing proxy weakens the tag; the comparison is weak.
      expect((await get(path, { 'If-None-Match': `W/${etag!}` })).status).toBe(304);
      expect((await get(path, { 'If-None-Match': '"other"' })).status).toBe(200);
    }
    const etag = (await get(`/array/${TOKEN}/config`)).headers.get('etag')!;
    await pool.query(`UPDATE teams SET heatmaps_opt_in = true WHERE id = $1`, [teamId]);
    await eventuallyPasses(async () => {
      const changed = await get(`/array/${TOKEN}/config`, { 'If-None-Match': etag });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('etag')).not.toBe(etag);
      expect(((await changed.json()) as { heatmaps: boolean }).heatmaps).toBe(true);
    }, NOTIFIED);
  });

  it('answers an unknown token with 404, and a token reset moves the config to the new token', async () => {
    expect((await get('/array/phc_unknown/config')).status).toBe(404);
    expect((await get('/array/phc_unknown/config.js')).status).toBe(404);
    await config();
    await pool.query(`UPDATE teams SET api_token = 'phc_rotated' WHERE id = $1`, [teamId]);
    await eventuallyPasses(async () => {
      expect((await get(`/array/${TOKEN}/config`)).status).toBe(404);
      const moved = await get('/array/phc_rotated/config');
      expect(moved.status).toBe(200);
      expect(((await moved.json()) as { token: string }).token).toBe('phc_rotated');
    }, NOTIFIED);
  });

  it('hears changes again after its connection is killed, and drops everything it may have missed', async () => {
    await config();
    await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'capture-listener' AND datname = current_database()`,
    );
    await eventuallyPasses(() => expect(listener.listening).toBe(false), {
      ...NOTIFIED,
      timeoutMs: 5_000,
    }).catch(() => undefined);
    await eventuallyPasses(() => expect(listener.listening).toBe(true), NOTIFIED);
    await pool.query(`UPDATE teams SET autocapture_opt_out = true WHERE id = $1`, [teamId]);
    await eventuallyPasses(async () => expect((await config()).autocapture_opt_out).toBe(true), NOTIFIED);
  });

  it('answers session recording batches with 200 and quota_limited recordings, whatever their size', async () => {
    for (const body of ['{"data":"anything"}', Buffer.alloc(3 * 1024 * 1024, 'x')]) {
      const response = await fetch(`${baseUrl}/s/?compression=gzip-js&ver=1.449.2`, {
        method: 'POST',
        headers: { 'Content-Type': 'text/plain', Origin: 'https://shop.example' },
        body,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      expect(await response.json()).toEqual({ status: 1, quota_limited: ['recordings'] });
    }
  });

  it("serves posthog-js's scripts as PostHog's assets host does: the snippet's array.js, the extensions, and array.js with the config", async () => {
    const dist = path.join(path.dirname(require.resolve('posthog-js/package.json')), 'dist');
    const { version } = JSON.parse(await readFile(require.resolve('posthog-js/package.json'), 'utf8')) as {
      version: string;
    };
    for (const [url, file] of [
      ['/static/array.js', 'array.js'],
      ['/static/array.full.js', 'array.full.js'],
      [`/static/exception-autocapture.js?v=${version}`, 'exception-autocapture.js'],
      [`/static/${version}/web-vitals.js`, 'web-vitals.js'],
    ]) {
      const response = await get(url, { Origin: 'https://shop.example' });
      expect({ url, status: response.status }).toEqual({ url, status: 200 });
      expect(response.headers.get('content-type')).toMatch(/^application\/javascript/);
      expect(response.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      expect(await response.text()).toBe(await readFile(path.join(dist, file), 'utf8'));
      const etag = response.headers.get('etag')!;
      expect((await get(url, { 'If-None-Match': etag })).status).toBe(304);
    }
    for (const url of [
      '/static/1.0.0/web-vitals.js',
      '/static/nothing.js',
      '/static/module.js',
      '/static/..%2Fpackage.json',
      '/static/%2E%2E%2Fpackage.json',
      '/static/array.js.map',
    ]) {
      expect({ url, status: (await get(url)).status }).toEqual({ url, status: 404 });
    }

    const bundled = await get(`/array/${TOKEN}/array.js`);
    expect(bundled.status).toBe(200);
    const script = await bundled.text();
    expect(script.startsWith(await readFile(path.join(dist, 'array.js'), 'utf8'))).toBe(true);
    expect(script).toContain(`window._POSTHOG_REMOTE_CONFIG[${JSON.stringify(TOKEN)}]`);
    expect((await get('/array/phc_unknown/array.js')).status).toBe(404);
  });
});
