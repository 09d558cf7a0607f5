interface CacheEntry {
  value: string | string[];
  /** ms since the epoch; undefined: no expiry. */
  expiresAt: number | undefined;
}

/**
 * `meta.cache`: PostHog backs it with Redis; here it lives in the process, one namespace per app and
 * project, bounded by `maxEntries` (oldest written first out). NOTE: it is a cache, as PostHog
 * documents it: two replicas do not share it, and a restart empties it. What must survive goes to
 * `meta.storage` (Postgres).
 */
export class PluginCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(private readonly maxEntries = 100_000) {}

  set(namespace: string, key: string, value: string, ttlSeconds: number | null): void {
    this.write(namespace, key, { value, expiresAt: expiry(ttlSeconds) });
  }

  get(namespace: string, key: string): string | null {
    const entry = this.read(namespace, key);
    return entry && typeof entry.value === 'string' ? entry.value : null;
  }

  incr(namespace: string, key: string): number {
    const entry = this.read(namespace, key);
    const next = (entry && typeof entry.value === 'string' ? Number(entry.value) || 0 : 0) + 1;
    this.write(namespace, key, { value: String(next), expiresAt: entry?.expiresAt });
    return next;
  }

  expire(namespace: string, key: string, ttlSeconds: number): boolean {
    const entry = this.read(namespace, key);
    if (!entry) return false;
    entry.expiresAt = expiry(ttlSeconds);
    return true;
  }

  lpush(namespace: string, key: string, elements: string[]): number {
    const list = this.list(namespace, key);
    list.unshift(...[...elements].reverse());
    return list.length;
  }

  lrange(namespace: string, key: string, start: number, end: number): string[] {
    const list = this.read(namespace, key)?.value;
    if (!Array.isArray(list)) return [];
    const from = start < 0 ? Math.max(list.length + start, 0) : start;
    const to = end < 0 ? list.length + end : end;
    return list.slice(from, to + 1);
  }

  llen(namespace: string, key: string): number {
    const list = this.read(namespace, key)?.value;
    return Array.isArray(list) ? list.length : 0;
  }

  lpop(namespace: string, key: string, count: number): string[] {
    const list = this.read(namespace, key)?.value;
    return Array.isArray(list) ? list.splice(0, Math.max(count, 0)) : [];
  }

  lrem(namespace: string, key: string, count: number, element: string): number {
    const list = this.read(namespace, key)?.value;
    if (!Array.isArray(list)) return 0;
    let removed = 0;
    const limit = count === 0 ? Infinity : Math.abs(count);
    const indexes = list.map((_, index) => index);
    if (count < 0) indexes.reverse();
    const doomed = new Set<number>();
    for (const index of indexes) {
      if (removed >= limit) break;
      if (list[index] === element) {
        doomed.add(index);
        removed += 1;
      }
    }
    const kept = list.filter((_, index) => !doomed.has(index));
    list.splice(0, list.length, ...kept);
    return removed;
  }

  private list(namespace: string, key: string): string[] {
    const entry = this.read(namespace, key);
    if (entry && Array.isArray(entry.value)) return entry.value;
    const created: CacheEntry = { value: [], expiresAt: entry?.expiresAt };
    this.write(namespace, key, created);
    return created.value as string[];
  }

  private read(namespace: string, key: string): CacheEntry | undefined {
    const name = `${namespace}\u0000${key}`;
    const entry = this.entries.get(name);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.entries.delete(name);
      return undefined;
    }
    return entry;
  }

  private write(namespace: string, key: string, entry: CacheEntry): void {
    const name = `${namespace}\u0000${key}`;
    this.entries.delete(name);
    this.entries.set(name, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}

function expiry(ttlSeconds: number | null | undefined): number | undefined {
  return ttlSeconds === null || ttlSeconds === undefined ? undefined : Date.now() + ttlSeconds * 1_000;
}
