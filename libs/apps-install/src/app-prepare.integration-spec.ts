import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { SandboxBudgetError, SandboxPool } from '@hogbase/apps-sandbox';
import { EgressPolicy } from '@hogbase/egress';
import { downloadApp } from './app-download.util';
import { buildApp } from './app-build.util';
import { inspectApp } from './app-inspect.util';
import { AppInstallError } from './app-install.error';
import type { AppFiles, BuiltFile } from './app-install.types';
import { prepareApp } from './app-prepare.util';
import {
  MISSING_PLUGIN_JSON_MESSAGE,
  readPluginJson,
  STATELESS_WITH_CONFIG_MESSAGE,
} from './plugin-json.validator';
import { FakeHttpServer } from './testing/app-archives.util';

/** Where inspections run, as the management API's installer has it: a worker thread. */
const sandboxes = new SandboxPool({ threads: 1, memoryBudgetBytes: 4 * 64 * 1024 * 1024 });
afterAll(() => sandboxes.close());

function transpiled(file: BuiltFile | undefined): string {
  if (file?.status !== 'TRANSPILED') throw new Error(`not transpiled: ${JSON.stringify(file)}`);
  return file.code;
}

describe('readPluginJson', () => {
  it('refuses an app without plugin.json with PostHog text', () => {
    expect(() => readPluginJson({ 'index.js': '' })).toThrow(
      new AppInstallError(MISSING_PLUGIN_JSON_MESSAGE),
    );
  });

  it('refuses a stateless app with a config', () => {
    const files = { 'plugin.json': JSON.stringify({ name: 'x', stateless: true, config: [{ key: 'a' }] }) };
    expect(() => readPluginJson(files)).toThrow(new AppInstallError(STATELESS_WITH_CONFIG_MESSAGE));
  });

  it('normalizes an object-form config, public jobs and the default entry', () => {
    const plugin = readPluginJson({
      'plugin.json': JSON.stringify({
        name: 'Hello',
        description: 'says hello',
        config: {
          greeting: { name: 'Greeting', type: 'string', required: true },
          mode: { type: 'choice', choices: ['a', 'b'] },
        },
        publicJobs: { sync: { payload: { full: { type: 'boolean' } } } },
      }),
      'index.ts': '',
    });

    expect(plugin).toMatchObject({
      name: 'Hello',
      description: 'says hello',
      url: null,
      icon: null,
      isStateless: false,
      main: 'index.ts',
      configSchema: [
        { key: 'greeting', name: 'Greeting', type: 'string', required: true, order: 0 },
        { key: 'mode', type: 'choice', choices: ['a', 'b'], order: 1 },
      ],
      publicJobs: { sync: { payload: { full: { type: 'boolean' } } } },
    });
  });

  it('names what is wrong in a malformed plugin.json', () => {
    expect(() => readPluginJson({ 'plugin.json': '{ nope' })).toThrow(/^Could not parse plugin.json/);
    expect(() =>
      readPluginJson({
        'plugin.json': JSON.stringify({ name: 'x', config: [{ key: 'a', type: 'number' }] }),
      }),
    ).toThrow('plugin.json: config field 1: "type" must be one of string, attachment, choice, json');
    expect(() =>
      readPluginJson({ 'plugin.json': JSON.stringify({ name: 'x', main: 'dist/index.js' }) }),
    ).toThrow('Could not find the main file dist/index.js in the plugin');
  });
});

describe('buildApp and inspectApp', () => {
  it('bundles a TypeScript entry with its relative imports and finds what it exports', async () => {
    const files: AppFiles = {
      'plugin.json': JSON.stringify({ name: 'Hello', main: 'src/main.ts' }),
      'src/main.ts': `
        import { RetryError } from '@posthog/plugin-scaffold'
        import fetch from 'node-fetch'
        import { shout } from './lib/shout'
        import defaults from '../defaults.json'
        export const metrics = { events_seen: 'sum', biggest: 'MAX' }
        export async function setupPlugin() { await fetch('https://example.com') }
        export function processEvent(event: { event: string }) { return { ...event, event: shout(event.event) + defaults.suffix } }
        export async function composeWebhook(event: unknown) { if (!event) throw new RetryError('later'); return null }
        export function runEveryHour() {}
        export const jobs = { resync: async () => {}, notAJob: 3 }
      `,
      'src/lib/shout.ts': `export const shout = (text: string): string => text.toUpperCase()`,
      'defaults.json': JSON.stringify({ suffix: '!' }),
    };
    const pluginJson = readPluginJson(files);

    const built = await buildApp(files, pluginJson);
    const code = transpiled(built.index);

    expect(code).not.toContain('./lib/shout');
    expect(code).toContain('require("@posthog/plugin-scaffold")');
    await expect(inspectApp(code, { sandboxes })).resolves.toEqual({
      capabilities: {
        methods: ['setupPlugin', 'composeWebhook', 'processEvent'],
        jobs: ['resync'],
        scheduled_tasks: ['runEveryHour'],
      },
      metrics: { events_seen: 'sum', biggest: 'max' },
    });
  });

  it('reports a compile error as the file status instead of throwing', async () => {
    const files: AppFiles = { 'plugin.json': '{"name":"x"}', 'index.ts': 'export function onEvent( {\n' };

    const built = await buildApp(files, readPluginJson(files));

    expect(built.index?.status).toBe('ERROR');
    expect(built.index).toMatchObject({ error: expect.stringContaining('index.ts:2:0') });
  });

  it('refuses bare imports the runtime does not provide, naming the module', async () => {
    const files: AppFiles = {
      'plugin.json': '{"name":"x"}',
      'index.js': "const pad = require('left-pad')\nexports.onEvent = pad",
    };

    const built = await buildApp(files, readPluginJson(files));

    expect(built.index).toMatchObject({
      status: 'ERROR',
      error: expect.stringContaining("Cannot find module 'left-pad'"),
    });
  });

  it('turns a throwing top level into AppInstallError with the app message', async () => {
    const files: AppFiles = {
      'plugin.json': '{"name":"x"}',
      'index.js': "throw new TypeError('no API key at load time')",
    };
    const built = await buildApp(files, readPluginJson(files));

    await expect(inspectApp(transpiled(built.index), { sandboxes })).rejects.toThrow(
      new AppInstallError('The app failed to load: TypeError: no API key at load time'),
    );
    const prepared = await prepareApp(files, { sandboxes });
    expect(prepared.built.index).toEqual({
      status: 'ERROR',
      error: 'The app failed to load: TypeError: no API key at load time',
    });
    expect(prepared.capabilities).toEqual({});
  });

  it('refuses metrics of a kind PostHog does not know', async () => {
    const files: AppFiles = {
      'plugin.json': '{"name":"x"}',
      'index.js': "exports.metrics = { total: 'avg' }\nexports.onEvent = () => {}",
    };
    const built = await buildApp(files, readPluginJson(files));

    await expect(inspectApp(transpiled(built.index), { sandboxes })).rejects.toThrow(
      'Invalid metric type for "total": must be one of sum, max, min',
    );
  });

  it("runs the app's top level on a pool thread: a busy loop is a clear AppInstallError, and this thread's timers tick meanwhile", async () => {
    let ticks = 0;
    const ticksDuringLoads: number[] = [];
    // The pool as the installer passes it, counting this thread's ticks while a load is under way.
    const watched: Pick<SandboxPool, 'createSandbox'> = {
      createSandbox: async (options) => {
        const sandbox = await sandboxes.createSandbox(options);
        const load = sandbox.load.bind(sandbox);
        sandbox.load = async (...args) => {
          const before = ticks;
          try {
            return await load(...args);
          } finally {
            ticksDuringLoads.push(ticks - before);
          }
        };
        return sandbox;
      },
    };
    const ticker = setInterval(() => (ticks += 1), 5);
    try {
      const failure: unknown = await inspectApp('exports.onEvent = () => {};\nwhile (true) {}', {
        sandboxes: watched,
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(AppInstallError);
      expect((failure as Error).message).toBe(
        'The app failed to load: loading the app used more than 1000 ms of CPU',
      );
    } finally {
      clearInterval(ticker);
    }
    // The loop ran its full second of CPU on the pool's thread, never blocking this one.
    expect(ticksDuringLoads).toHaveLength(1);
    expect(ticksDuringLoads[0]).toBeGreaterThan(0);
  });

  it('passes on a pool with no room as its SandboxBudgetError: a retry, not the app at fault', async () => {
    const small = new SandboxPool({ threads: 1, memoryBudgetBytes: 16 * 1024 * 1024 });
    try {
      await expect(inspectApp('exports.onEvent = () => {}', { sandboxes: small })).rejects.toBeInstanceOf(
        SandboxBudgetError,
      );
    } finally {
      await small.close();
    }
  });

  it('wraps site.ts in the served-script form whose inject receives config and posthog', async () => {
    const files: AppFiles = {
      'plugin.json': JSON.stringify({ name: 'Rain', config: [{ key: 'emoji', type: 'string', site: true }] }),
      'site.ts': `
        import { rain } from './rain'
        export function inject({ config, posthog }: { config: { emoji: string }; posthog: { capture: (event: string, properties: object) => void } }) {
          posthog.capture('made it rain', { emoji: rain(config.emoji) })
        }
      `,
      'rain.ts': `export const rain = (emoji: string) => emoji.repeat(3)`,
    };

    const prepared = await prepareApp(files, { sandboxes });
    const site = transpiled(prepared.built.site);

    expect(site).toMatch(/^\(function \(\) \{ let exports = \{\};/);
    expect(site).toMatch(/return exports; \}\)$/);
    expect(prepared.built.index).toBeUndefined();
    expect(prepared.capabilities).toEqual({});
    const captured: unknown[] = [];
    const window = { __$$ph_site_app_7: { capture: (...args: unknown[]) => captured.push(args) } };
    runInNewContext(`${site}().inject({ config: {"emoji":"🍍"}, posthog: window['__$$ph_site_app_7'] })`, {
      window,
    });
    expect(captured).toEqual([['made it rain', { emoji: '🍍🍍🍍' }]]);
  });

  it('transpiles frontend.tsx JSX to React.createElement with react left to the page', async () => {
    const files: AppFiles = {
      'plugin.json': '{"name":"x"}',
      'frontend.tsx': `import React from 'react'\nexport const scene = { component: () => <div className="hello">hi</div> }`,
    };

    const built = await buildApp(files, readPluginJson(files));
    const code = transpiled(built.frontend);

    expect(code.startsWith('"use strict";\nexport function getFrontendApp (require) {')).toBe(true);
    const getFrontendApp = runInNewContext(`(${code.replace(/^"use strict";\nexport /, '')})`);
    const react = { createElement: (...args: unknown[]) => args };
    const app = getFrontendApp((name: string) =>
      name === 'react' ? { default: react, __esModule: true } : undefined,
    );
    expect(app.scene.component()).toEqual(['div', { className: 'hello' }, 'hi']);
  });
});

describe('prepareApp with the published geoip app', () => {
  const server = new FakeHttpServer();
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await server.start();
    server.routes.set('/geoip.tgz', {
      body: await readFile(join(__dirname, '../test/fixtures/posthog-geoip-plugin-0.0.7.tgz')),
    });
  });
  afterAll(() => server.stop());

  it('finds its processEvent capability', async () => {
    // The fake server listens on loopback, allowed here as an admin would for a local mirror.
    const app = await downloadApp(`${baseUrl}/geoip.tgz`, {
      egress: new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }),
    });

    const prepared = await prepareApp(app.files, { sandboxes });

    expect(prepared.pluginJson).toMatchObject({
      name: 'GeoIP',
      isStateless: true,
      main: 'index.ts',
      configSchema: [],
    });
    expect(prepared.built.index?.status).toBe('TRANSPILED');
    expect(prepared.capabilities).toEqual({ methods: ['processEvent'], jobs: [], scheduled_tasks: [] });
    expect(prepared.metrics).toEqual({});
  });
});
