import type { Pool } from 'pg';
import type { Logger } from 'pino';

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
 * Resolves project API keys (`phc_…`) to project ids through Postgres, cached in memory.
 *
 * NOTE: when Postgres fails, a token that was ever known keeps resolving from the cache (capture
 * must not stop taking events because Postgres blinked); a token never seen cannot be decided
 * and raises TokenLookupUnavailableError, which capture answers with 503 so the SDK retries.
 * Concurrent lookups of one token share a single query.
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
    try {
      const teamId = await this.lookup(token);
      if (this.failing) {
        this.failing = false;
        this.options.logger?.info('project token lookups answer again');
      }
      return teamId;
    } catch (error) {
      if (!this.failing) {
        this.failing = true;
        this.options.logger?.warn(
          { err: error },
          'project token lookups failing: known tokens are served from the cache, unknown ones get 503 until Postgres answers',
        );
      }
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
   * Drops the tokens of a project (its token was reset or it was deleted) and the tokens remembered
   * as unknown (one may be its new token); every token when `teamId` is null.
   */
  forget(teamId: number | null): void {
    if (teamId === null) {
      this.entries.clear();
      return;
    }
    for (const [token, entry] of this.entries) {
      if (entry.teamId === teamId || entry.teamId === null) this.entries.delete(token);
    }
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
