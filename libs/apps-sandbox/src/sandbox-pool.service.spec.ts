import { threadId } from 'node:worker_threads';
import type { SandboxFetch, SandboxOptions } from './sandbox.service';
import { SandboxBudgetError, SandboxError, SandboxTimeoutError } from './sandbox.errors';
import { SandboxPool, type PooledSandbox } from './sandbox-pool.service';

const MB = 1024 * 1024;

/** A host fetch that answers only when the test says so (or never). */
function heldFetch(): { fetch: SandboxFetch; release: () => void } {
  const waiting: (() => void)[] = [];
  return {
    fetch: () =>
      new Promise((resolve) => waiting.push(() => resolve({ status: 200, headers: {}, body: '' }))),
    release: () => {
      for (const answer of waiting.splice(0)) answer();
    },
  };
}

describe('sandbox pool: apps on worker threads', () => {
  const pools: SandboxPool[] = [];
  const createPool = (options: Partial<ConstructorParameters<typeof SandboxPool>[0]> = {}) => {
    const pool = new SandboxPool({ threads: 2, memoryBudgetBytes: 512 * MB, ...options });
    pools.push(pool);
    return pool;
  };
  const loaded = async (
    pool: SandboxPool,
    code: string,
    options: Partial<SandboxOptions> = {},
  ): Promise<PooledSandbox> => {
    const sandbox = await pool.createSandbox({ memoryLimitBytes: 16 * MB, timeLimitMs: 2_000, ...options });
    await sandbox.load(code);
    return sandbox;
  };
  afterEach(async () => {
    for (const pool of pools.splice(0)) await pool.close();
  });

  it('runs a busy app off the calling thread: the caller’s timers fire while it loops', async () => {
    const pool = createPool();
    const sandbox = await loaded(pool, `exports.processEvent = () => { while (true) {} };`, {
      cpuLimitMs: 1_000,
    });
    const order: string[] = [];
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 5);
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('main-thread timer');
        resolve();
      }, 20),
    );
    const call = sandbox.call('processEvent', {}).catch((error: unknown) => {
      order.push('busy call settled');
      return error;
    });
    const [error] = await Promise.all([call, timer]);
    clearInterval(ticker);
    expect(error).toBeInstanceOf(SandboxTimeoutError);
    expect((error as Error).message).toBe('processEvent used more than 1000 ms of CPU');
    expect(order).toEqual(['main-thread timer', 'busy call settled']);
    expect(ticks).toBeGreaterThan(10);
  });

  it('reports an async busy loop and one in the top-level code as timeouts across the thread boundary', async () => {
    const pool = createPool();
    const sandbox = await loaded(pool, `exports.onEvent = async () => { while (true) {} };`, {
      cpuLimitMs: 100,
    });
    await expect(sandbox.call('onEvent', {})).rejects.toThrow(
      new SandboxTimeoutError('onEvent used more than 100 ms of CPU'),
    );
    expect(sandbox.broken).toBe(true);

    const loading = await pool.createSandbox({
      memoryLimitBytes: 16 * MB,
      timeLimitMs: 2_000,
      cpuLimitMs: 100,
    });
    await expect(
      loading.load(`(async () => { while (true) {} })(); exports.onEvent = () => 'loaded';`),
    ).rejects.toThrow(new SandboxTimeoutError('loading the app used more than 100 ms of CPU'));
  });

  it.each([
    ['awaits it in a loop', `for (;;) { try { await spin(); } catch (error) {} }`],
    ['does not await it', `for (;;) { spin().catch(() => {}); }`],
    ['catches what calling it throws', `for (;;) { try { spin(); } catch (error) {} }`],
    ['loops in promise executors', `for (;;) { new Promise(() => { for (;;) {} }); }`],
  ])(
    'stops an app that catches its interruption and goes on (%s) within its CPU budget, as a timeout',
    async (_how, loop) => {
      const pool = createPool({ threads: 1 });
      // The wall clock is far off: only the CPU budget (and ending the thread) stops the app.
      const sandbox = await loaded(
        pool,
        `const spin = async () => { for (;;) {} };
         exports.onEvent = async () => { ${loop} };`,
        { cpuLimitMs: 100, timeLimitMs: 1_000 },
      );
      const error: unknown = await sandbox.call('onEvent', {}).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SandboxTimeoutError);
      expect((error as Error).message).toBe('onEvent used more than 100 ms of CPU');
      expect(sandbox.broken).toBe(true);

      // The pool goes on (on a new thread when the old one had to be ended).
      const next = await loaded(pool, `exports.processEvent = () => 'next';`);
      await expect(next.call('processEvent', {})).resolves.toBe('next');
    },
  );

  it('runs the guest’s host functions, fetch and console on the calling thread', async () => {
    const pool = createPool();
    const seen: { what: string; threadId: number }[] = [];
    const sandbox = await pool.createSandbox({
      memoryLimitBytes: 16 * MB,
      timeLimitMs: 2_000,
      hostFunctions: {
        'storage.get': (key) => {
          seen.push({ what: 'host function', threadId });
          return Promise.resolve(`value of ${JSON.stringify(key)}`);
        },
      },
      fetch: (url) => {
        seen.push({ what: 'fetch', threadId });
        return Promise.resolve({ status: 201, headers: {}, body: url });
      },
      onLog: (line) => seen.push({ what: `console ${line.message}`, threadId }),
    });
    await sandbox.load(
      `exports.onEvent = async (event) => {
         console.log('hello from', event.name);
         const stored = await get('k');
         const response = await fetch('https://example.com/x');
         return { stored, status: response.status, body: await response.text() };
       };`,
      {
        setup: `const host = globalThis.__hogbaseHost; globalThis.get = (key) => host.call('storage.get', key);`,
      },
    );
    await expect(sandbox.call('onEvent', { name: 'ada' })).resolves.toEqual({
      stored: 'value of "k"',
      status: 201,
      body: 'https://example.com/x',
    });
    // Console lines come in batches, after the host calls of the same stretch.
    expect(seen).toHaveLength(3);
    expect(seen).toEqual(
      expect.arrayContaining([
        { what: 'host function', threadId },
        { what: 'fetch', threadId },
        { what: 'console hello from ada', threadId },
      ]),
    );
  });

  it('fails only the calls on a thread that died, breaks its sandboxes, and puts a new thread in its place', async () => {
    const notices: string[] = [];
    const pool = createPool({
      threads: 2,
      // Far below what the thread needs to read the app's host call below: it runs out and dies.
      threadHeapMb: 48,
      onNotice: (notice) => notices.push(notice.type),
    });
    const held = heldFetch();
    const crasher = await pool.createSandbox({
      memoryLimitBytes: 256 * MB,
      timeLimitMs: 10_000,
      // Past the default payload limit, which would refuse the host call inside the app.
      maxPayloadLength: 256 * MB,
      hostFunctions: { 'cache.lpush': () => Promise.resolve(0) },
    });
    await crasher.load(
      `exports.processEvent = async () => {
         const items = [];
         const text = 'x'.repeat(500);
         for (let index = 0; index < 150000; index++) items.push(text + index);
         await push(items);
       };`,
      {
        setup: `const host = globalThis.__hogbaseHost; globalThis.push = (items) => host.call('cache.lpush', items);`,
      },
    );
    const other = await loaded(pool, `exports.processEvent = (event) => ({ ...event, seen: true });`);
    const neighbour = await loaded(
      pool,
      `exports.onEvent = async () => { await fetch('https://slow.example.com/'); };`,
      { fetch: held.fetch, timeLimitMs: 30_000 },
    );
    const waiting = neighbour.call('onEvent', {}).catch((error: unknown) => error);

    const crashed = await crasher.call('processEvent', {}).catch((error: unknown) => error);
    expect(crashed).toBeInstanceOf(SandboxError);
    expect((crashed as Error).message).toMatch(/^the sandbox thread (failed|exited)/);
    const neighbourError = await waiting;
    expect(neighbourError).toBeInstanceOf(SandboxError);
    expect((neighbourError as Error).message).toMatch(/^the sandbox thread (failed|exited)/);
    expect(crasher.broken).toBe(true);
    expect(neighbour.broken).toBe(true);
    expect(notices).toContain('thread-failed');

    // The sandbox on the other thread goes on, and a new sandbox gets a thread again.
    await expect(other.call('processEvent', { event: 'after' })).resolves.toEqual({
      event: 'after',
      seen: true,
    });
    const next = await loaded(pool, `exports.processEvent = () => 'fresh';`);
    await expect(next.call('processEvent', {})).resolves.toBe('fresh');
    held.release();
  });

  it('unloads the least recently used idle sandbox when a new one would pass the memory budget', async () => {
    const pool = createPool({ memoryBudgetBytes: 32 * MB, budgetName: 'APPS_SANDBOXES_MEMORY_MB' });
    const first = await loaded(pool, `exports.processEvent = () => 'first';`);
    const second = await loaded(pool, `exports.processEvent = () => 'second';`);
    await first.call('processEvent', {});
    await second.call('processEvent', {});
    await first.call('processEvent', {});

    const third = await loaded(pool, `exports.processEvent = () => 'third';`);
    await expect(third.call('processEvent', {})).resolves.toBe('third');
    expect(second.broken).toBe(true);
    await expect(second.call('processEvent', {})).rejects.toThrow(
      /unloaded to make room for another within APPS_SANDBOXES_MEMORY_MB/,
    );
    expect(first.broken).toBe(false);
    await expect(first.call('processEvent', {})).resolves.toBe('first');
    expect(pool.stats()).toMatchObject({ sandboxes: 2, reservedBytes: 32 * MB });
  });

  it('refuses a new sandbox with an error naming the budget when every sandbox in it is in a call', async () => {
    const pool = createPool({ memoryBudgetBytes: 32 * MB, budgetName: 'APPS_SANDBOXES_MEMORY_MB' });
    const held = heldFetch();
    const busy = [
      await loaded(pool, `exports.onEvent = async () => { await fetch('https://slow.example.com/'); };`, {
        fetch: held.fetch,
      }),
      await loaded(pool, `exports.onEvent = async () => { await fetch('https://slow.example.com/'); };`, {
        fetch: held.fetch,
      }),
    ];
    const calls = busy.map((sandbox) => sandbox.call('onEvent', {}));

    const refused: unknown = await pool
      .createSandbox({ memoryLimitBytes: 16 * MB, timeLimitMs: 200 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SandboxBudgetError);
    expect((refused as Error).message).toBe(
      'no room for another sandbox: 2 sandboxes in calls hold 32 MB of APPS_SANDBOXES_MEMORY_MB (32 MB)',
    );
    await expect(pool.createSandbox({ memoryLimitBytes: 64 * MB, timeLimitMs: 200 })).rejects.toThrow(
      new SandboxError('a sandbox of 64 MB does not fit in APPS_SANDBOXES_MEMORY_MB (32 MB)'),
    );

    held.release();
    await Promise.all(calls);
    // Once the calls are over, the budget makes room again (by unloading the older one).
    const next = await loaded(pool, `exports.processEvent = () => 'room again';`);
    await expect(next.call('processEvent', {})).resolves.toBe('room again');
  });
});
