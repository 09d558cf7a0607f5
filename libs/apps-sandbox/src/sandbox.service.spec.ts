import {
  createSandbox,
  type Sandbox,
  type SandboxFetch,
  type SandboxJson,
  type SandboxLogLine,
} from './sandbox.service';
import { SandboxAppError, SandboxError, SandboxMemoryError, SandboxTimeoutError } from './sandbox.errors';

const MEMORY_LIMIT_BYTES = 32 * 1024 * 1024;

const WEBHOOK_APP = `
function composeWebhook(event, { config }) {
  if (event.event !== '$pageview') return null;
  return {
    url: config.url,
    body: JSON.stringify({ text: event.distinct_id + ' viewed ' + event.properties.$current_url }),
    headers: { 'Content-Type': 'application/json' },
    method: 'POST',
  };
}
module.exports = { composeWebhook, jobs: { retry: async (payload) => payload } };
`;

describe('apps sandbox', () => {
  const sandboxes: Sandbox[] = [];
  const open = async (
    options: {
      timeLimitMs?: number;
      cpuLimitMs?: number;
      fetch?: SandboxFetch;
      onLog?: (line: SandboxLogLine) => void;
    } = {},
  ) => {
    const sandbox = await createSandbox({
      memoryLimitBytes: MEMORY_LIMIT_BYTES,
      timeLimitMs: options.timeLimitMs ?? 1000,
      cpuLimitMs: options.cpuLimitMs,
      fetch: options.fetch,
      onLog: options.onLog,
    });
    sandboxes.push(sandbox);
    return sandbox;
  };
  afterEach(() => {
    for (const sandbox of sandboxes.splice(0)) sandbox.dispose();
  });

  it('reports the exported plugin methods and job names', async () => {
    const sandbox = await open();
    const capabilities = sandbox.load(`
      exports.setupPlugin = () => {};
      exports.onEvent = async () => {};
      exports.runEveryMinute = () => {};
      exports.notAPluginMethod = () => {};
      exports.jobs = { exportBatch: () => {}, notAFunction: 1 };
    `);
    expect(capabilities).toEqual({
      methods: ['setupPlugin', 'onEvent', 'runEveryMinute'],
      jobs: ['exportBatch'],
    });
  });

  it('finds the plugin in exports.default and in globals when nothing was exported', async () => {
    const fromDefault = await open();
    expect(fromDefault.load(`exports.default = { processEvent: (event) => event };`).methods).toEqual([
      'processEvent',
    ]);
    const fromGlobals = await open();
    expect(fromGlobals.load(`function processEvent(event) { return event; }`).methods).toEqual([
      'processEvent',
    ]);
  });

  it('answers composeWebhook with the webhook object, or null to skip', async () => {
    const sandbox = await open();
    sandbox.load(WEBHOOK_APP);
    const meta = { config: { url: 'https://hooks.example.com/in' } };
    const event = {
      event: '$pageview',
      distinct_id: 'user-1',
      properties: { $current_url: 'https://example.com/' },
    };

    await expect(sandbox.call('composeWebhook', event, meta)).resolves.toEqual({
      url: 'https://hooks.example.com/in',
      body: '{"text":"user-1 viewed https://example.com/"}',
      headers: { 'Content-Type': 'application/json' },
      method: 'POST',
    });
    await expect(
      sandbox.call('composeWebhook', { ...event, event: '$autocapture' }, meta),
    ).resolves.toBeNull();
    await expect(sandbox.call('jobs.retry', { attempt: 2 })).resolves.toEqual({ attempt: 2 });
  });

  it('gives an async onEvent the host fetch answer it awaits', async () => {
    const requests: { url: string; method: unknown; body: unknown }[] = [];
    const sandbox = await open({
      fetch: async (url, init) => {
        requests.push({ url, method: init.method, body: init.body });
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { status: 201, headers: { 'X-Request-Id': 'r-7' }, body: '{"accepted":true}' };
      },
    });
    sandbox.load(`
      exports.onEvent = async (event) => {
        const response = await fetch('https://api.example.com/track', { method: 'POST', body: JSON.stringify(event) });
        const answer = await response.json();
        return { status: response.status, ok: response.ok, requestId: response.headers.get('x-request-id'), answer };
      };
    `);

    await expect(sandbox.call('onEvent', { event: 'signed up' })).resolves.toEqual({
      status: 201,
      ok: true,
      requestId: 'r-7',
      answer: { accepted: true },
    });
    expect(requests).toEqual([
      { url: 'https://api.example.com/track', method: 'POST', body: '{"event":"signed up"}' },
    ]);
  });

  it('rejects a failed host fetch inside the app, which may catch it', async () => {
    const sandbox = await open({ fetch: () => Promise.reject(new Error('connect ECONNREFUSED')) });
    sandbox.load(`
      exports.onEvent = async () => {
        try { await fetch('https://down.example.com/'); return 'sent'; } catch (error) { return 'caught ' + error.message; }
      };
    `);
    await expect(sandbox.call('onEvent')).resolves.toBe('caught connect ECONNREFUSED');
  });

  it('stops an infinite loop with SandboxTimeoutError, breaks only that sandbox, and the host goes on', async () => {
    const sandbox = await open({ timeLimitMs: 100 });
    sandbox.load(`exports.onEvent = () => { while (true) {} };`);
    await expect(sandbox.call('onEvent')).rejects.toBeInstanceOf(SandboxTimeoutError);
    expect(sandbox.broken).toBe(true);
    await expect(sandbox.call('onEvent')).rejects.toThrow(/broken/);

    const next = await open();
    next.load(WEBHOOK_APP);
    await expect(next.call('composeWebhook', { event: 'other' }, { config: {} })).resolves.toBeNull();
  });

  it.each([
    ['a sync method', 'processEvent', `exports.processEvent = () => { while (true) {} };`],
    [
      'an async method before its first await',
      'onEvent',
      `exports.onEvent = async () => { while (true) {} };`,
    ],
    [
      'an async method after an await',
      'onEvent',
      `exports.onEvent = async () => { await null; while (true) {} };`,
    ],
    [
      'an async helper the method awaits',
      'onEvent',
      `const work = async () => { while (true) {} }; exports.onEvent = async () => { await work(); };`,
    ],
    [
      'a promise continuation',
      'onEvent',
      `exports.onEvent = () => Promise.resolve().then(() => { while (true) {} });`,
    ],
    ['an async setupPlugin', 'setupPlugin', `exports.setupPlugin = async () => { while (true) {} };`],
    ['an async job', 'jobs.retry', `exports.jobs = { retry: async () => { while (true) {} } };`],
  ] as const)(
    'reports a busy loop in %s as SandboxTimeoutError and breaks the sandbox',
    async (_where, method, code) => {
      const sandbox = await open({ cpuLimitMs: 100, timeLimitMs: 10_000 });
      sandbox.load(code);
      const error: unknown = await sandbox.call(method).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxTimeoutError);
      expect((error as Error).message).toBe(`${method} used more than 100 ms of CPU`);
      expect(sandbox.broken).toBe(true);
    },
  );

  it.each([
    ['sync', `while (true) {}`],
    ['in an async function it does not await', `(async () => { while (true) {} })();`],
    ['in a promise executor', `new Promise(() => { while (true) {} });`],
  ])(
    'reports a busy loop in the top-level code (%s) as SandboxTimeoutError from load',
    async (_how, loop) => {
      const sandbox = await open({ cpuLimitMs: 100, timeLimitMs: 10_000 });
      expect(() => sandbox.load(`${loop}\nexports.onEvent = () => 'loaded';`)).toThrow(
        new SandboxTimeoutError('loading the app used more than 100 ms of CPU'),
      );
      expect(sandbox.broken).toBe(true);
    },
  );

  it('reports a call as a timeout when the app catches its interruption and answers anyway', async () => {
    const sandbox = await open({ cpuLimitMs: 100, timeLimitMs: 10_000 });
    sandbox.load(`
      const work = async () => { while (true) {} };
      exports.onEvent = async () => {
        try { await work(); } catch (error) { return 'survived: ' + error.message; }
      };
    `);
    await expect(sandbox.call('onEvent')).rejects.toThrow(
      new SandboxTimeoutError('onEvent used more than 100 ms of CPU'),
    );
    expect(sandbox.broken).toBe(true);

    const other = await open({ cpuLimitMs: 100, timeLimitMs: 10_000 });
    other.load(`
      const work = async () => { while (true) {} };
      exports.processEvent = () => work().then(() => 'finished', (error) => 'survived: ' + error.message);
    `);
    await expect(other.call('processEvent')).rejects.toBeInstanceOf(SandboxTimeoutError);
  });

  it('keeps an app’s own "InternalError: interrupted" an app error: an app cannot fake a timeout', async () => {
    const sandbox = await open({ cpuLimitMs: 100 });
    sandbox.load(`
      exports.processEvent = () => { throw new InternalError('interrupted'); };
      exports.onEvent = async () => { await null; throw new InternalError('interrupted'); };
      exports.getSettings = () => 'still here';
    `);
    for (const method of ['processEvent', 'onEvent'] as const) {
      const error: unknown = await sandbox.call(method).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxAppError);
      expect(error).toMatchObject({ message: 'interrupted', appErrorName: 'InternalError' });
    }
    expect(sandbox.broken).toBe(false);
    await expect(sandbox.call('getSettings')).resolves.toBe('still here');
  });

  it('stops an async method whose awaited host work outlasts the time limit', async () => {
    const sandbox = await open({
      timeLimitMs: 100,
      fetch: () => new Promise(() => {}),
    });
    sandbox.load(`exports.onEvent = async () => { await fetch('https://slow.example.com/'); };`);
    await expect(sandbox.call('onEvent')).rejects.toBeInstanceOf(SandboxTimeoutError);
    expect(sandbox.broken).toBe(true);
    // Freeing a runtime whose fetch is still out made QuickJS abort its wasm instance.
    expect(() => sandbox.dispose()).not.toThrow();
  });

  it('disposes a healthy sandbox with a fetch still out, and its late answer is ignored', async () => {
    let answer: (response: {
      status: number;
      headers: Record<string, string>;
      body: string;
    }) => void = () => {};
    const sandbox = await open({ fetch: () => new Promise((resolve) => (answer = resolve)) });
    sandbox.load(`exports.onEvent = async () => { await fetch('https://slow.example.com/'); };`);
    const call = sandbox.call('onEvent');
    expect(() => sandbox.dispose()).not.toThrow();
    await expect(call).rejects.toThrow('the sandbox was disposed');
    answer({ status: 200, headers: {}, body: '' });
    await new Promise((resolve) => setImmediate(resolve));
  });

  it.each([
    ['array growth', 'const items = []; while (true) items.push(new Array(1e5).fill(Math.random()));'],
    ['Map fill', 'const map = new Map(); let i = 0; while (true) map.set(i++, { value: i });'],
    ['dictionary object', 'const dictionary = {}; let i = 0; while (true) dictionary["key" + i] = i++;'],
    ['string doubling', 'let text = "x"; while (true) text += text;'],
  ])('contains a %s memory bomb as SandboxMemoryError and the host stays alive', async (_name, bomb) => {
    const sandbox = await open({ timeLimitMs: 10_000 });
    sandbox.load(`exports.processEvent = (event) => { ${bomb} };`);
    await expect(sandbox.call('processEvent', {})).rejects.toBeInstanceOf(SandboxMemoryError);
    expect(sandbox.broken).toBe(true);

    const next = await open();
    next.load(`exports.processEvent = (event) => ({ ...event, seen: true });`);
    await expect(next.call('processEvent', { event: 'after' })).resolves.toEqual({
      event: 'after',
      seen: true,
    });
  });

  it('has no process, require, file system or host globals', async () => {
    const sandbox = await open();
    sandbox.load(`
      exports.getSettings = () => ({
        process: typeof process,
        require: typeof require,
        fetch: typeof fetch,
        setTimeout: typeof setTimeout,
        Buffer: typeof Buffer,
      });
    `);
    await expect(sandbox.call('getSettings')).resolves.toEqual({
      process: 'undefined',
      require: 'undefined',
      fetch: 'undefined',
      setTimeout: 'undefined',
      Buffer: 'undefined',
    });
  });

  it('rejects an app throw with SandboxAppError carrying its message and stack, and stays usable', async () => {
    const sandbox = await open();
    sandbox.load(`
      exports.processEvent = (event) => { if (event.bad) throw new TypeError('bad event ' + event.id); return event; };
      exports.onEvent = async () => { throw new Error('async boom'); };
    `);
    const error: unknown = await sandbox
      .call('processEvent', { bad: true, id: 7 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxAppError);
    expect(error).toMatchObject({ message: 'bad event 7', appErrorName: 'TypeError' });
    expect((error as SandboxAppError).appStack).toContain('app.js:2');
    await expect(sandbox.call('onEvent')).rejects.toThrow(
      new SandboxAppError('async boom', 'Error', undefined),
    );
    expect(sandbox.broken).toBe(false);
    await expect(sandbox.call('processEvent', { id: 8 })).resolves.toEqual({ id: 8 });
  });

  it('turns deep recursion into an app error instead of crashing the host', async () => {
    const sandbox = await open();
    sandbox.load(
      `exports.processEvent = () => { const recurse = (depth) => recurse(depth + 1) + 1; return recurse(0); };`,
    );
    await expect(sandbox.call('processEvent')).rejects.toThrow(/stack overflow/);
    await expect(sandbox.call('processEvent')).rejects.toBeInstanceOf(SandboxAppError);
  });

  it('lets a setup source call host functions and append a call context the app cannot reach', async () => {
    const stored = new Map<string, SandboxJson>();
    const sandbox = await createSandbox({
      memoryLimitBytes: MEMORY_LIMIT_BYTES,
      timeLimitMs: 1000,
      hostFunctions: {
        'storage.set': (key, value) => {
          stored.set(JSON.stringify(key), value);
          return Promise.resolve(undefined);
        },
        'storage.get': (key) => Promise.resolve(stored.get(JSON.stringify(key)) ?? null),
      },
    });
    sandboxes.push(sandbox);
    sandbox.load(
      `exports.onEvent = async (event, meta) => {
         await meta.storage.set('last', event.uuid);
         return { last: await meta.storage.get('last'), config: meta.config, host: typeof __hogbaseHost };
       };
       exports.runEveryMinute = async (meta) => meta.storage.get('missing');
       exports.composeWebhook = () => { return __hogbaseHost.call('storage.get', 'last'); };`,
      {
        globals: { pluginConfig: { url: 'https://example.com' } },
        setup: `
          const host = globalThis.__hogbaseHost;
          const meta = {
            config: globalThis.pluginConfig,
            storage: { set: (key, value) => host.call('storage.set', key, value), get: (key) => host.call('storage.get', key) },
          };
          globalThis.__hogbaseCallContext = () => [meta];`,
      },
    );
    await expect(sandbox.call('onEvent', { uuid: 'u1' })).resolves.toEqual({
      last: 'u1',
      config: { url: 'https://example.com' },
      host: 'undefined',
    });
    expect(stored.get('"last"')).toBe('u1');
    await expect(sandbox.call('runEveryMinute')).resolves.toBeNull();
    await expect(sandbox.call('composeWebhook', {})).rejects.toThrow("'__hogbaseHost' is not defined");
  });

  it('rejects an unknown host function inside the app', async () => {
    const sandbox = await open();
    sandbox.load(`exports.onEvent = async () => {}`, {
      setup: `const host = globalThis.__hogbaseHost; globalThis.probe = () => host.call('nope');`,
    });
    sandbox.dispose();
    const next = await open();
    next.load(
      `exports.onEvent = async () => { try { await probe(); return 'resolved'; } catch (error) { return error.message; } };`,
      { setup: `const host = globalThis.__hogbaseHost; globalThis.probe = () => host.call('nope');` },
    );
    await expect(next.call('onEvent')).resolves.toBe('the host has no function nope');
  });

  it('refuses a method the app does not export', async () => {
    const sandbox = await open();
    sandbox.load(WEBHOOK_APP);
    await expect(sandbox.call('onEvent')).rejects.toThrow(
      new SandboxError('the app does not export onEvent'),
    );
  });

  it('hands console lines to onLog, non-strings as JSON', async () => {
    const lines: SandboxLogLine[] = [];
    const sandbox = await open({ onLog: (line) => lines.push(line) });
    sandbox.load(`
      console.info('loaded');
      exports.onEvent = (event) => { console.log('got', event.event, { n: 1 }); console.warn('careful'); console.error(new Error('bad')); };
    `);
    await sandbox.call('onEvent', { event: 'signed up' });
    expect(lines.slice(0, 3)).toEqual([
      { level: 'info', message: 'loaded' },
      { level: 'log', message: 'got signed up {"n":1}' },
      { level: 'warn', message: 'careful' },
    ]);
    expect(lines[3]).toMatchObject({ level: 'error', message: expect.stringContaining('Error: bad') });
  });

  describe('guest output is untrusted', () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    beforeEach(() => {
      unhandled.length = 0;
      process.on('unhandledRejection', record);
    });
    afterEach(() => {
      process.off('unhandledRejection', record);
    });

    const HOSTILE_TOP_LEVEL = `
      JSON.stringify = () => ({ not: 'a string' });
      JSON.parse = () => { throw new Error('JSON.parse replaced'); };
      Promise.prototype.then = function () { return 42; };
      Promise.resolve = () => { throw new Error('Promise.resolve replaced'); };
      Array.prototype.concat = () => { throw new Error('concat replaced'); };
      Array.prototype.map = () => { throw new Error('map replaced'); };
      Array.prototype[Symbol.iterator] = function* () {};
      Object.assign = () => { throw new Error('Object.assign replaced'); };
      Object.keys = () => { throw new Error('Object.keys replaced'); };
      String.prototype.startsWith = () => { throw new Error('startsWith replaced'); };
      String.prototype.slice = () => { throw new Error('slice replaced'); };
      Reflect.apply = () => { throw new Error('Reflect.apply replaced'); };
    `;

    it('carries arguments in and results out for an app that replaced JSON, Promise, Array and String builtins', async () => {
      const requests: string[] = [];
      const sandbox = await open({
        fetch: (url) => {
          requests.push(url);
          return Promise.resolve({ status: 200, headers: { 'X-Answer': '42' }, body: '{"ok":true}' });
        },
      });
      const capabilities = sandbox.load(
        `${HOSTILE_TOP_LEVEL}
         exports.processEvent = (event) => ({ seen: event.event, count: event.properties.count + 1 });
         exports.onEvent = async (event) => {
           const response = await fetch('https://api.example.com/' + event.event);
           return { status: response.status, answer: response.headers.get('x-answer') };
         };
         exports.jobs = { retry: async (payload) => payload };`,
      );
      expect(capabilities).toEqual({ methods: ['onEvent', 'processEvent'], jobs: ['retry'] });

      await expect(
        sandbox.call('processEvent', { event: 'signed up', properties: { count: 1 } }),
      ).resolves.toEqual({
        seen: 'signed up',
        count: 2,
      });
      await expect(sandbox.call('onEvent', { event: 'paid' })).resolves.toEqual({
        status: 200,
        answer: '42',
      });
      await expect(sandbox.call('jobs.retry', { attempt: 2 })).resolves.toEqual({ attempt: 2 });
      expect(requests).toEqual(['https://api.example.com/paid']);
      expect(unhandled).toEqual([]);
    });

    it('rejects only that call when its result or error cannot be read, and the host and other sandboxes go on', async () => {
      const sandbox = await open({ cpuLimitMs: 200 });
      sandbox.load(`
        exports.processEvent = () => ({ toJSON() { throw new Error('no JSON for you'); } });
        exports.onEvent = async () => { throw { get message() { throw new Error('no message either'); } }; };
        exports.composeWebhook = () => { throw { get message() { while (true) {} } }; };
        exports.getSettings = () => 'still here';
      `);
      await expect(sandbox.call('processEvent', {})).rejects.toThrow(
        new SandboxAppError('no JSON for you', 'Error', undefined),
      );
      await expect(sandbox.call('onEvent', {})).rejects.toThrow(SandboxError);
      await expect(sandbox.call('getSettings')).resolves.toBe('still here');
      // Reading the error runs the app's getter: it is bounded like the app's own code.
      await expect(sandbox.call('composeWebhook', {})).rejects.toBeInstanceOf(SandboxTimeoutError);

      const other = await open();
      other.load(WEBHOOK_APP);
      await expect(other.call('composeWebhook', { event: 'other' }, { config: {} })).resolves.toBeNull();
      expect(unhandled).toEqual([]);
    });
  });

  it('refuses a host call or a result past the payload limit inside the app, and a too long console line', async () => {
    const lines: SandboxLogLine[] = [];
    const stored: SandboxJson[] = [];
    const sandbox = await createSandbox({
      memoryLimitBytes: MEMORY_LIMIT_BYTES,
      timeLimitMs: 1000,
      maxPayloadLength: 1_000,
      hostFunctions: {
        'storage.set': (value) => {
          stored.push(value);
          return Promise.resolve(undefined);
        },
      },
      onLog: (line) => lines.push(line),
    });
    sandboxes.push(sandbox);
    sandbox.load(
      `exports.onEvent = async (event) => {
         try { await set('x'.repeat(event.size)); return 'stored'; } catch (error) { return error.message; }
       };
       exports.processEvent = (event) => ({ ...event, padding: 'x'.repeat(2000) });
       exports.getSettings = () => { console.log('y'.repeat(70 * 1024)); return 'logged'; };`,
      {
        setup: `const host = globalThis.__hogbaseHost; globalThis.set = (value) => host.call('storage.set', value);`,
      },
    );
    await expect(sandbox.call('onEvent', { size: 10 })).resolves.toBe('stored');
    await expect(sandbox.call('onEvent', { size: 5_000 })).resolves.toMatch(
      /^storage.set was given 50\d\d characters, more than the 1000 the host takes$/,
    );
    await expect(sandbox.call('processEvent', { event: 'big' })).rejects.toThrow(
      /^processEvent's result has \d+ characters as JSON, more than the 1000 the host takes$/,
    );
    await expect(sandbox.call('getSettings')).resolves.toBe('logged');
    expect(lines).toEqual([
      { level: 'log', message: '[a console line of 71680 characters, longer than 65536, was dropped]' },
    ]);
    expect(stored).toEqual(['xxxxxxxxxx']);
  });

  it('stops a call once the guest time of all its stretches passes the CPU budget, across awaits', async () => {
    let fetches = 0;
    const sandbox = await open({
      cpuLimitMs: 150,
      timeLimitMs: 10_000,
      fetch: () => {
        fetches += 1;
        return Promise.resolve({ status: 200, headers: {}, body: '' });
      },
    });
    sandbox.load(`
      const spin = (ms) => { const until = Date.now() + ms; while (Date.now() < until) {} };
      exports.onEvent = async () => {
        for (let round = 0; round < 10; round++) { spin(60); await fetch('https://example.com/' + round); }
        return 'done';
      };
    `);
    const error: unknown = await sandbox.call('onEvent').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SandboxTimeoutError);
    expect((error as Error).message).toBe('onEvent used more than 150 ms of CPU');
    // Each stretch alone is within the budget: the sum is what stopped it.
    expect(fetches).toBeGreaterThanOrEqual(2);
    expect(fetches).toBeLessThan(10);
  });
});
