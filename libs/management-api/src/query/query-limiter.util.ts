/**
 * At most `perKey` tasks of one key (a project) and `total` in all run at once; the others wait
 * their turn in arrival order, as PostHog queues queries past a team's concurrency instead of
 * refusing them.
 */
export class ConcurrencyLimiter {
  private running = 0;
  private readonly runningByKey = new Map<string, number>();
  private readonly waiting: { key: string; start: () => void }[] = [];

  constructor(
    private readonly perKey: number,
    private readonly total: number,
  ) {}

  async run<T>(key: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(key, signal);
    try {
      return await task();
    } finally {
      this.release(key);
    }
  }

  /** Tasks running and waiting, for metrics and tests. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  private acquire(key: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (this.canStart(key)) {
      this.started(key);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        key,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(abortReason(signal!));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private release(key: string): void {
    this.running -= 1;
    const left = (this.runningByKey.get(key) ?? 1) - 1;
    if (left === 0) this.runningByKey.delete(key);
    else this.runningByKey.set(key, left);
    // The first waiting task that may start now: a busy project does not hold up the others.
    const index = this.waiting.findIndex((entry) => this.canStart(entry.key));
    if (index < 0) return;
    const [next] = this.waiting.splice(index, 1);
    this.started(next.key);
    next.start();
  }

  private canStart(key: string): boolean {
    return this.running < this.total && (this.runningByKey.get(key) ?? 0) < this.perKey;
  }

  private started(key: string): void {
    this.running += 1;
    this.runningByKey.set(key, (this.runningByKey.get(key) ?? 0) + 1);
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('Aborted');
}
