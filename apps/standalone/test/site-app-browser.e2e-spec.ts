import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from 'pg';
import type { Browser, Page, Response } from 'playwright-core';
import { findRunningEmbeddedPostgres } from '@hogbase/postgres';
import {
  READY_TIMEOUT_MS,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';
import {
  describeWithChromium,
  launchChromium,
  listedEvents,
  openPage,
  startSitePages,
  type SitePages,
} from './browser-page.util';
import { managementApi, managementRequest } from './management-request';

/**
 * A site app (frontend app) on `npm start`, run by posthog-js in a real browser: Debian's Chromium,
 * headless, driven by playwright-core, on a page served from another loopback origin than capture.
 *
 * The app is made through the management API as a user would: a source app whose site.ts the
 * install compiles, enabled for the project with a site field, a server-only field and a secret.
 * The app sets `window.siteAppSaw` from its config and captures an event through the posthog
 * instance it was given; the event is then listed by the management API.
 *
 * posthog-js 1.449 reads site apps from the remote config only: first `/array/:token/config.js`
 * (apps inline), and when that script fails, the JSON `/array/:token/config`, whose links it loads
 * as `/site_app/:id/:token/:hash/` scripts. Both paths are driven here.
 */

const GREETING = 'hello from a site app';

// What a developer writes: site.ts exporting inject(), compiled by the install on update_source.
const SITE_TS = `
interface SiteConfig { greeting: string }
interface Capturer { capture(event: string, properties: Record<string, unknown>): void }
export function inject({ config, posthog }: { config: SiteConfig; posthog: Capturer }): void {
  const page = window as unknown as Record<string, unknown>;
  page.siteAppSaw = config.greeting;
  page.siteAppConfig = config;
  posthog.capture('site app loaded', { greeting: config.greeting });
}
`;

const PLUGIN_JSON = JSON.stringify({
  name: 'Greeter',
  config: [
    { key: 'greeting', name: 'Greeting', type: 'string', site: true },
    { key: 'serverOnly', name: 'Server only', type: 'string' },
    { key: 'apiKey', name: 'API key', type: 'string', secret: true },
  ],
});

interface PageGlobals {
  siteAppSaw?: string;
  siteAppConfig?: Record<string, unknown>;
  _POSTHOG_REMOTE_CONFIG?: Record<string, { siteApps: unknown[] }>;
}

const SUITE = 'npm start: a site app run by posthog-js in headless Chromium';

describeWithChromium(SUITE)(SUITE, () => {
  let standalone: StandaloneForTest | undefined;
  let site: SitePages | undefined;
  let browser: Browser | undefined;
  let postgres: Client | undefined;
  let captureUrl: string;
  let managementUrl: string;
  let credentials: InitialCredentials;
  let configId: number;
  let webToken: string;

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-site-app-test-', { LOG_LEVEL: 'warn' });
    ({ captureUrl, managementUrl, credentials } = standalone);

    const api = managementApi(managementUrl, credentials.personal_api_key);
    const apps = `/api/organizations/${credentials.organization_id}/pipeline_frontend_apps/`;
    const { id: pluginId } = await api('POST', apps, { plugin_type: 'source', name: 'Greeter' });
    await api('PATCH', `${apps}${String(pluginId)}/update_source/`, {
      'plugin.json': PLUGIN_JSON,
      'site.ts': SITE_TS,
    });
    ({ id: configId } = await api('POST', `/api/projects/${credentials.project_id}/plugin_configs/`, {
      plugin: pluginId,
      enabled: true,
      config: { greeting: GREETING, serverOnly: 'not for pages', apiKey: 'sk-not-for-pages' },
    }));

    // The config's web token (part of the /site_app/ URL) is not in PostHog's config response.
    const { Client: PostgresClient } = await import('pg');
    postgres = new PostgresClient({
      connectionString: await findRunningEmbeddedPostgres(standalone.dataDir),
    });
    await postgres.connect();
    ({
      rows: [{ web_token: webToken }],
    } = await postgres.query<{ web_token: string }>('SELECT web_token FROM plugin_configs WHERE id = $1', [
      configId,
    ]));

    site = await startSitePages({
      '/': {
        token: credentials.project_api_key,
        init: {
          api_host: captureUrl,
          opt_in_site_apps: true,
          capture_pageview: false,
          autocapture: false,
          disable_session_recording: true,
          // Headless Chromium says HeadlessChrome in its user agent, which posthog-js drops as a bot.
          opt_out_useragent_filter: true,
        },
      },
    });
    browser = await launchChromium();
  }, READY_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await postgres?.end();
    await standalone?.stop().catch(() => undefined);
  });

  /** A fresh browser context (no stored posthog state) on the site's page. */
  const openSite = (prepare?: (page: Page) => Promise<void> | void) =>
    openPage(browser!, site!.url(), prepare);

  const listed = (name: string, count: number) =>
    listedEvents(managementUrl, credentials, { event: name }, count);

  /** The project's site apps as capture offers them, once the cache shows `count` (its TTL is 10 s). */
  async function offeredSiteApps(count: number): Promise<unknown[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const response = await fetch(`${captureUrl}/array/${credentials.project_api_key}/config`);
      const { siteApps } = (await response.json()) as { siteApps: unknown[] };
      if (siteApps.length === count || Date.now() > deadline) return siteApps;
      await sleep(250);
    }
  }

  it('runs no site app while the project has not turned inject_web_apps on', async () => {
    let remoteConfig: Promise<Response> | undefined;
    const { page, close } = await openSite((page) => {
      remoteConfig = page.waitForResponse((response) => response.url().endsWith('/config.js'));
    });
    try {
      expect((await remoteConfig!).status()).toBe(200);
      const loaded = await page.waitForFunction(
        (token) => (globalThis as PageGlobals)._POSTHOG_REMOTE_CONFIG?.[token]?.siteApps,
        credentials.project_api_key,
      );
      expect(await loaded.jsonValue()).toEqual([]);
      expect(await page.evaluate(() => (globalThis as PageGlobals).siteAppSaw)).toBeUndefined();
    } finally {
      await close();
    }
  }, 60_000);

  it('runs the site app with its site config, and the event it captures is stored', async () => {
    const optIn = await managementRequest(
      standalone!.managementUrl,
      credentials.personal_api_key,
      'PATCH',
      `/api/projects/${credentials.project_id}/`,
      { inject_web_apps: true },
    );
    expect(optIn).toMatchObject({ status: 200, body: { inject_web_apps: true } });
    expect(await offeredSiteApps(1)).toHaveLength(1);

    const { page, close } = await openSite();
    try {
      await page.waitForFunction(() => (globalThis as PageGlobals).siteAppSaw !== undefined);
      expect(await page.evaluate(() => (globalThis as PageGlobals).siteAppSaw)).toBe(GREETING);
      // Only the site field reached the page: no server-only value, no secret.
      expect(await page.evaluate(() => (globalThis as PageGlobals).siteAppConfig)).toEqual({
        greeting: GREETING,
      });
      // Read while the page is open: posthog-js sends its batch on a timer, and a page closed
      // first may never send it.
      const [event] = await listed('site app loaded', 1);
      expect(event?.properties).toMatchObject({ greeting: GREETING, $lib: 'web' });
    } finally {
      await close();
    }
  }, 90_000);

  it('loads the app as a /site_app/ script when the config.js script cannot be loaded', async () => {
    const siteAppRequests: string[] = [];
    const { page, close } = await openSite(async (page) => {
      // As when a blocker or a proxy drops the script: posthog-js falls back to the JSON config.
      await page.route('**/config.js', (route) => route.abort());
      page.on('response', (response) => {
        if (response.url().includes('/site_app/')) {
          siteAppRequests.push(`${response.status()} ${new URL(response.url()).pathname}`);
        }
      });
    });
    try {
      await page.waitForFunction(() => (globalThis as PageGlobals).siteAppSaw !== undefined);
      expect(await page.evaluate(() => (globalThis as PageGlobals).siteAppSaw)).toBe(GREETING);
      expect(siteAppRequests).toEqual([
        expect.stringMatching(new RegExp(`^200 /site_app/${configId}/${webToken}/[0-9a-f]{32}/$`)),
      ]);
      expect(await listed('site app loaded', 2)).toHaveLength(2);
    } finally {
      await close();
    }
  }, 90_000);
});
