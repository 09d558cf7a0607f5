import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { validateToken } from '@hogbase/capture-core';

/** What the routes need of the token cache: the project of a project API key, null if none. */
export interface ProjectTokens {
  resolve(token: string): Promise<number | null>;
}

export class TokenLookupUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the project token could not be looked up: Postgres is unavailable', { cause });
    this.name = 'TokenLookupUnavailableError';
  }
}

interface CacheEntry {
  teamId: number | null;
  checkedAt: number;
}

export interface ProjectTokenCacheOptions {
  /** How long a known token is trusted before it is looked up again. */
  knownTtlMs?: number;
  /** How long an unknown token is remembered as unknown (a token created since gets in after this). */
  unknownTtlMs?: number;
  maxEntries?: number;
  /**
   * While lookups fail, how long a known token is served from the cache before Postgres is asked
   * again: a Postgres that hangs must not add its connection timeout to every request.
   */
  retryAfterFailureMs?: number;
  /** Gets one line when lookups start failing and one when they answer again. */
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/**
 * Whether a project could have this token: capture's rules for one (validateToken). Any other is
 * nobody's without asking Postgres, which refuses a NUL byte outright: that failure would read as
 * an outage (503, logged as one) that any client could cause with `?token=%00`.
 */
function couldBeProjectToken(token: string): boolean {
  try {
    validateToken(token);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves project API keys (`phc_…`) to project ids through Postgres, cached in memory.
 *
 * NOTE: when Postgres fails, a token that was ever known keeps resolving from the cache (capture
 * must not stop taking events because Postgres blinked); a token never seen cannot be decided
 * and raises TokenLookupUnavailableError, which capture answers with 503 so the SDK retries.
 * Concurrent lookups of one token share a single query. Every project's token is loaded at start
 * (load()), and capture is not ready until that succeeded once (readiness()).
 */
export class ProjectTokenCache {
  private readonly entries = new Map<string, CacheEntry>();
  private readonly inFlight = new Map<string, Promise<number | null>>();
  private readonly knownTtlMs: number;
  private readonly unknownTtlMs: number;
  private readonly maxEntries: number;
  private readonly retryAfterFailureMs: number;
  /** Set while lookups fail, to log the change of state once each way. */
  private failing = false;
  /** Whether the projects' tokens have been read once (load()): known tokens then survive an outage. */
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

  /** The project id of the token, or null when no project has it. */
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

  /**
   * Reads every project's token (up to maxEntries, newest projects first) into the cache, so that
   * a later Postgres outage finds them known. Concurrent calls share one query.
   */
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

  /**
   * Capture's readiness as far as tokens go: `true` once the tokens have been loaded (a Postgres
   * outage after that leaves every known project served), else a load is tried now and its
   * failure is why not. A capture that never reached Postgres knows no token: every event would be
   * a 503, so it must not be taken into rotation.
   */
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

  /**
   * Drops the tokens of a project (its token was reset or it was deleted) and the tokens remembered
   * as unknown (one may be its new token); every token when `teamId` is null, which are then loaded
   * again.
   */
  forget(teamId: number | null): void {
    this.generation++;
    this.loading = undefined;
    if (teamId === null) {
      this.entries.clear();
      this.loaded = false;
      // Read again at once (this follows the change listener's reconnection: Postgres answers).
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
      // Drop the oldest insertion: Map iterates in insertion order.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.delete(token);
    this.entries.set(token, { teamId, checkedAt: this.now() });
  }
}
