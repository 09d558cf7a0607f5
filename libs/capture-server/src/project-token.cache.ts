import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { validateToken } from '@hogbase/capture-core';
import { TokenLookupUnavailableError } from './capture.errors';

export interface ProjectTokens {
  resolve(token: string): Promise<number | null>;
}

interface CacheEntry {
  teamId: number | null;
  checkedAt: number;
}

export interface ProjectTokenCacheOptions {
  knownTtlMs?: number;
  /** A token created since it was looked up gets in after this. */
  unknownTtlMs?: number;
  maxEntries?: number;
  /** While lookups fail: a Postgres that hangs must not add its connection timeout to every request. */
  retryAfterFailureMs?: number;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/** Postgres would refuse a NUL byte, an outage (503) anyone could cause with `?token=%00`: not asked. */
function couldBeProjectToken(token: string): boolean {
  try {
    validateToken(token);
    return true;
  } catch {
    return false;
  }
}

/**
 * Project API keys (`phc_…`) to project ids. NOTE: while Postgres fails, a known token keeps resolving;
 * one never seen raises TokenLookupUnavailableError (503, SDKs retry).
 */
export class ProjectTokenCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<number | null>>();
  private readonly knownTtlMs: number;
  private readonly unknownTtlMs: number;
  private readonly maxEntries: number;
  private readonly retryAfterFailureMs: number;
  private failing = false;
  private loaded = false;
  private loading: Promise<void> | undefined;
  /** Counts forget() calls: a load that started before one must not bring back what it dropped. */
  private generation = 0;

  constructor(
    private readonly pool: Pool,
    private readonly options: ProjectTokenCacheOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.knownTtlMs = options.knownTtlMs ?? 60_000;
    this.unknownTtlMs = options.unknownTtlMs ?? 5_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.retryAfterFailureMs = options.retryAfterFailureMs ?? 5_000;
  }

  async resolve(token: string): Promise<number | null> {
    const entry = this.entries.get(token);
    const age = entry ? this.now() - entry.checkedAt : Infinity;
    if (entry && age < (entry.teamId === null ? this.unknownTtlMs : this.knownTtlMs)) return entry.teamId;
    if (!couldBeProjectToken(token)) return null;
    try {
      const teamId = await this.lookup(token);
      this.answered();
      return teamId;
    } catch (error) {
      this.failed(error);
      if (entry?.teamId == null) throw new TokenLookupUnavailableError(error);
      // Served as known, and asked again only after retryAfterFailureMs.
      const knownFor = this.knownTtlMs - this.retryAfterFailureMs;
      this.entries.set(token, {
        teamId: entry.teamId,
        checkedAt: Math.max(entry.checkedAt, this.now() - knownFor),
      });
      return entry.teamId;
    }
  }

  /** Every project's token (up to maxEntries, newest first), so that a later outage finds them known. */
  load(): Promise<void> {
    if (this.loading) return this.loading;
    const generation = this.generation;
    const loading = this.pool
      .query<{ id: number; api_token: string }>(
        'SELECT id, api_token FROM teams WHERE api_token IS NOT NULL ORDER BY id DESC LIMIT $1',
        [this.maxEntries],
      )
      .then(
        ({ rows }) => {
          this.answered();
          // A forget() meanwhile: these rows may hold a token just reset; the next load reads again.
          if (generation !== this.generation) return;
          // Oldest first, so that the newest projects are the last an overflow would drop.
          for (const row of rows.reverse()) this.remember(row.api_token, row.id);
          this.loaded = true;
        },
        (error: unknown) => {
          this.failed(error);
          throw error;
        },
      )
      .finally(() => {
        if (this.loading === loading) this.loading = undefined;
      });
    this.loading = loading;
    return loading;
  }

  /** `true` once the tokens were loaded, else why not: a capture knowing no token would 503 everything. */
  async readiness(): Promise<true | string> {
    if (this.loaded) return true;
    try {
      await this.load();
      return this.loaded || 'project tokens are being loaded';
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return `no project token loaded yet, Postgres is unavailable: ${reason}`;
    }
  }

  /** Drops a project's tokens and the remembered unknown ones (one may be its new token); all for null. */
  forget(teamId: number | null): void {
    this.generation++;
    this.loading = undefined;
    if (teamId === null) {
      this.entries.clear();
      this.loaded = false;
      this.load().catch(() => undefined);
      return;
    }
    for (const [token, entry] of this.entries) {
      if (entry.teamId === teamId || entry.teamId === null) this.entries.delete(token);
    }
  }

  private answered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.options.logger?.info('project token lookups answer again');
  }

  private failed(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.options.logger?.warn(
      { err: error },
      'project token lookups failing: known tokens are served from the cache, unknown ones get 503 until Postgres answers',
    );
  }

  private lookup(token: string): Promise<number | null> {
    let pending = this.inFlight.get(token);
    if (!pending) {
      pending = this.pool
        .query<{ id: number }>('SELECT id FROM teams WHERE api_token = $1', [token])
        .then((result) => {
          const teamId = result.rows[0]?.id ?? null;
          this.remember(token, teamId);
          return teamId;
        })
        .finally(() => this.inFlight.delete(token));
      this.inFlight.set(token, pending);
    }
    return pending;
  }

  private remember(token: string, teamId: number | null): void {
    if (this.entries.size >= this.maxEntries && !this.entries.has(token)) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(token);
    this.entries.set(token, { teamId, checkedAt: this.now() });
  }
}
