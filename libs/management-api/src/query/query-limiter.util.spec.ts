import { ConcurrencyLimiter } from './query-limiter.util';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe('ConcurrencyLimiter', () => {
  it('runs at most perKey tasks of a project and queues the rest in order, without holding up another project', async () => {
    const limiter = new ConcurrencyLimiter(2, 3);
    const started: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const task = (name: string, key: string) =>
      limiter.run(key, async () => {
        started.push(name);
        const gate = deferred();
        gates.set(name, gate);
        await gate.promise;
      });
    const all = [task('a1', 'a'), task('a2', 'a'), task('a3', 'a'), task('b1', 'b'), task('b2', 'b')];
    await Promise.resolve();
    expect(started).toEqual(['a1', 'a2', 'b1']);
    expect(limiter.load).toEqual({ running: 3, waiting: 2 });
    gates.get('b1')!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    // a3 waits for its project; b2 may start in the slot b1 freed.
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
    gates.get('a1')!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2', 'a3']);
    for (const gate of gates.values()) gate.resolve();
    await Promise.all(all);
    expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  });

  it('frees the slot when a task fails, and drops a waiting task whose signal aborts', async () => {
    const limiter = new ConcurrencyLimiter(1, 1);
    const gate = deferred();
    const first = limiter.run('a', () => gate.promise.then(() => Promise.reject(new Error('boom'))));
    const controller = new AbortController();
    const second = limiter.run('a', () => Promise.resolve('second'), controller.signal);
    const third = limiter.run('a', () => Promise.resolve('third'));
    controller.abort(new Error('cancelled'));
    await expect(second).rejects.toThrow('cancelled');
    gate.resolve();
    await expect(first).rejects.toThrow('boom');
    await expect(third).resolves.toBe('third');
    expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  });
});
