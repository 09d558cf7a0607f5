interface CacheEntry {
  namespace: string;
  key: string;
  value: string | string[];
  bytes: number;
  /** ms since the epoch; undefined: no expiry. */
  expiresAt: number | undefined;
}

interface Namespace {
  bytes: number;
  entries: Map<string, CacheEntry>;
  /** Only then can a sweep free anything. */
  expiring: number;
  lastSweepAt: number;
}

export interface PluginCacheLimits {
  /** All namespaces together; past it the oldest written goes. */
  maxEntries: number;
  maxBytes: number;
  /** One app in one project; a write past it is refused. */
  maxBytesPerNamespace: number;
}

/** On top of the characters: the map entry and its bookkeeping. */
const ENTRY_OVERHEAD_BYTES = 64;
const ELEMENT_OVERHEAD_BYTES = 16;
/** A namespace over its budget looks for expired entries at most this often. */
const SWEEP_INTERVAL_MS = 1_000;

const DEFAULT_LIMITS: PluginCacheLimits = {
  maxEntries: 100_000,
  maxBytes: 64 * 1024 * 1024,
  maxBytesPerNamespace: 8 * 1024 * 1024,
};

/**
 * `meta.cache`, in the process (PostHog's is Redis). NOTE: a cache, as PostHog documents it: replicas
 * do not share it and a restart empties it. Past its total budget the oldest written entries go, as
 * a Redis with an eviction policy would.
 */
export class PluginCache {
  /** Oldest written first. */
  private readonly entries = new Map<string, CacheEntry>();
  private readonly namespaces = new Map<string, Namespace>();
  private totalBytes = 0;
  private readonly limits: PluginCacheLimits;

  constructor(limits: Partial<PluginCacheLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  usage(namespace: string): { bytes: number; keys: number } {
    const space = this.namespaces.get(namespace);
    return { bytes: space?.bytes ?? 0, keys: space?.entries.size ?? 0 };
  }

  set(namespace: string, key: string, value: string, ttlSeconds: number | null): void {
    this.write(namespace, key, value, expiry(ttlSeconds));
  }

  get(namespace: string, key: string): string | null {
    const entry = this.read(namespace, key);
    return entry && typeof entry.value === 'string' ? entry.value : null;
  }

  incr(namespace: string, key: string): number {
    const entry = this.read(namespace, key);
    const next = (entry && typeof entry.value === 'string' ? Number(entry.value) || 0 : 0) + 1;
    this.write(namespace, key, String(next), entry?.expiresAt);
    return next;
  }

  expire(namespace: string, key: string, ttlSeconds: number): boolean {
    const entry = this.read(namespace, key);
    if (!entry) return false;
    this.setExpiry(entry, expiry(ttlSeconds));
    return true;
  }

  lpush(namespace: string, key: string, elements: string[]): number {
    const existing = this.read(namespace, key);
    const added = elements.reduce((sum, element) => sum + elementBytes(element), 0);
    if (existing && Array.isArray(existing.value)) {
      this.admit(namespace, added, existing.bytes + added);
      existing.value = [...elements].reverse().concat(existing.value);
      this.resize(existing, existing.bytes + added);
      this.evictForTotal();
      return existing.value.length;
    }
    const list = [...elements].reverse();
    this.put(namespace, key, list, existing?.expiresAt, keyBytes(key) + added);
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
    const entry = this.read(namespace, key);
    if (!entry || !Array.isArray(entry.value)) return [];
    const popped = entry.value.splice(0, Math.max(count, 0));
    this.resize(entry, entry.bytes - popped.reduce((sum, element) => sum + elementBytes(element), 0));
    return popped;
  }

  lrem(namespace: string, key: string, count: number, element: string): number {
    const entry = this.read(namespace, key);
    if (!entry || !Array.isArray(entry.value)) return 0;
    const list = entry.value;
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
    entry.value = list.filter((_, index) => !doomed.has(index));
    this.resize(entry, entry.bytes - removed * elementBytes(element));
    return removed;
  }

  private write(namespace: string, key: string, value: string, expiresAt: number | undefined): void {
    this.put(namespace, key, value, expiresAt, keyBytes(key) + value.length);
  }

  private put(
    namespace: string,
    key: string,
    value: string | string[],
    expiresAt: number | undefined,
    bytes: number,
  ): void {
    const existing = this.namespaces.get(namespace)?.entries.get(key);
    this.admit(namespace, bytes - (existing?.bytes ?? 0), bytes);
    if (existing) this.remove(existing);
    const space = this.namespace(namespace);
    const entry: CacheEntry = { namespace, key, value, bytes, expiresAt };
    space.entries.set(key, entry);
    space.bytes += bytes;
    if (expiresAt !== undefined) space.expiring += 1;
    this.totalBytes += bytes;
    this.entries.set(fullName(namespace, key), entry);
    this.evictForTotal();
  }

  /** After dropping the namespace's expired entries; the app's call rejects with this. */
  private admit(namespace: string, growth: number, entryBytes: number): void {
    const limit = this.limits.maxBytesPerNamespace;
    if (entryBytes > limit) {
      throw new Error(
        `meta.cache refused a value of ${entryBytes} bytes: larger than this app's cache budget of ${limit} bytes (APPS_CACHE_MB_PER_APP)`,
      );
    }
    const space = this.namespaces.get(namespace);
    if (growth <= 0 || !space || space.bytes + growth <= limit) return;
    this.sweep(space);
    if (space.bytes + growth <= limit) return;
    throw new Error(
      `meta.cache is full: this app's keys hold ${space.bytes} of its ${limit} bytes (APPS_CACHE_MB_PER_APP); delete keys or give them a TTL`,
    );
  }

  private sweep(space: Namespace): void {
    const now = Date.now();
    if (space.expiring === 0 || now - space.lastSweepAt < SWEEP_INTERVAL_MS) return;
    space.lastSweepAt = now;
    for (const entry of [...space.entries.values()]) {
      if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.remove(entry);
    }
  }

  private evictForTotal(): void {
    while (this.totalBytes > this.limits.maxBytes || this.entries.size > this.limits.maxEntries) {
      const oldest = this.entries.values().next();
      if (oldest.done) return;
      this.remove(oldest.value);
    }
  }

  private resize(entry: CacheEntry, bytes: number): void {
    const space = this.namespace(entry.namespace);
    space.bytes += bytes - entry.bytes;
    this.totalBytes += bytes - entry.bytes;
    entry.bytes = bytes;
  }

  private setExpiry(entry: CacheEntry, expiresAt: number | undefined): void {
    const space = this.namespace(entry.namespace);
    if (entry.expiresAt !== undefined) space.expiring -= 1;
    if (expiresAt !== undefined) space.expiring += 1;
    entry.expiresAt = expiresAt;
  }

  private remove(entry: CacheEntry): void {
    const space = this.namespaces.get(entry.namespace);
    if (!this.entries.delete(fullName(entry.namespace, entry.key)) || !space) return;
    space.entries.delete(entry.key);
    space.bytes -= entry.bytes;
    if (entry.expiresAt !== undefined) space.expiring -= 1;
    this.totalBytes -= entry.bytes;
    if (space.entries.size === 0) this.namespaces.delete(entry.namespace);
  }

  private namespace(name: string): Namespace {
    let space = this.namespaces.get(name);
    if (!space) {
      space = { bytes: 0, entries: new Map(), expiring: 0, lastSweepAt: 0 };
      this.namespaces.set(name, space);
    }
    return space;
  }

  private read(namespace: string, key: string): CacheEntry | undefined {
    const entry = this.namespaces.get(namespace)?.entries.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      this.remove(entry);
      return undefined;
    }
    return entry;
  }
}

function fullName(namespace: string, key: string): string {
  return `${namespace}\u0000${key}`;
}

function keyBytes(key: string): number {
  return key.length + ENTRY_OVERHEAD_BYTES;
}

function elementBytes(element: string): number {
  return element.length + ELEMENT_OVERHEAD_BYTES;
}

function expiry(ttlSeconds: number | null | undefined): number | undefined {
  return ttlSeconds === null || ttlSeconds === undefined ? undefined : Date.now() + ttlSeconds * 1_000;
}
