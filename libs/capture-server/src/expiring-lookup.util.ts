import type { Logger } from 'pino';

export interface ExpiringLookupOptions {
  ttlMs?: number;
  /** While reads fail, how long a stale entry is served before it is read again. */
  retryAfterFailureMs?: number;
  maxEntries?: number;
}

/** One line when reads start failing and one when they answer again, for lookups of one Postgres. */
export class OutageLog {
  private failing = false;

  constructor(
    private readonly logger: Pick<Logger, 'warn' | 'info'> | undefined,
    private readonly messages: { failing: string; answering: string },
  ) {}

  failed(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.logger?.warn({ err: error }, this.messages.failing);
  }

  answered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger?.info(this.messages.answering);
  }
}

interface Entry<V> {
  value: V;
  checkedAt: number;
}

/**
 * A bounded map of values trusted for ttlMs; concurrent reads of a key share one. NOTE: a failed read
 * serves what was read before (only a key never read raises, a 503); a read racing `forget` is not kept.
 */
export class ExpiringLookup<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly inFlight = new Map<K, Promise<V>>();
  private readonly ttlMs: number;
  private readonly retryAfterFailureMs: number;
  private readonly maxEntries: number;
  private generation = 0;

  constructor(
    private readonly read: (key: K) => Promise<V>,
    private readonly unavailable: (cause: unknown) => Error,
    options: ExpiringLookupOptions,
    private readonly outage: OutageLog,
    private readonly now: () => number = Date.now,
  ) {
    this.ttlMs = options.ttlMs ?? 10_000;
    this.retryAfterFailureMs = Math.min(options.retryAfterFailureMs ?? 5_000, this.ttlMs);
    this.maxEntries = options.maxEntries ?? 10_000;
  }

  async get(key: K): Promise<V> {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.checkedAt < this.ttlMs) return entry.value;
    try {
      const value = await this.lookup(key);
      this.outage.answered();
      return value;
    } catch (error) {
      this.outage.failed(error);
      if (!entry) throw this.unavailable(error);
      // Served as it was, and asked again only after retryAfterFailureMs.
      this.entries.set(key, {
        value: entry.value,
        checkedAt: Math.max(entry.checkedAt, this.now() - (this.ttlMs - this.retryAfterFailureMs)),
      });
      return entry.value;
    }
  }

  forget(key?: K): void {
    this.generation += 1;
    if (key === undefined) {
      this.entries.clear();
      this.inFlight.clear();
    } else {
      this.entries.delete(key);
      this.inFlight.delete(key);
    }
  }

  private lookup(key: K): Promise<V> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      const generation = this.generation;
      pending = this.read(key)
        .then((value) => {
          if (generation === this.generation) this.remember(key, value);
          return value;
        })
        .finally(() => {
          if (this.inFlight.get(key) === pending) this.inFlight.delete(key);
        });
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private remember(key: K, value: V): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) {
      // Drop the oldest insertion: Map iterates in insertion order.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(key);
    this.entries.set(key, { value, checkedAt: this.now() });
  }
}
