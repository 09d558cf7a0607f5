import type { Pool } from 'pg';

export interface TeamTokenCacheOptions {
  /** How long a project's token is trusted before it is read again. Default 60 s. */
  ttlMs?: number;
  /**
   * How long a project id that no project has is remembered as such (a message naming one is left
   * to person processing, which drops it). Short: the project may be created meanwhile. Default 5 s.
   */
  unknownTtlMs?: number;
  /**
   * How long the token a project had before a reset is still taken, once this cache has seen it
   * replaced: capture accepts the old token for as long as its own cache holds it (60 s), and
   * those events may still be on the queue. Default 10 min.
   */
  replacedTokenGraceMs?: number;
  /** Projects remembered at most (the oldest go first). Default 100,000. */
  maxEntries?: number;
  now?: () => number;
}

interface TeamToken {
  /** The project's API token; null: no such project. */
  token: string | null;
  checkedAt: number;
  replaced?: { token: string; until: number };
}

/** What a message claims: `team_id` and `token` as they came, not yet validated. */
export interface ClaimedProject {
  team_id: unknown;
  token: unknown;
}

function isTeamId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= 2_147_483_647;
}

/**
 * Whether a message's token is the API token of the project it names (`teams.api_token`), read
 * from Postgres and cached per project. Capture resolves the project from the token, but the
 * events topic is a trust boundary in a shared Kafka: a message naming a real project with a
 * token that is not its own must not be stored there. Project secret keys (`phs_`) and personal
 * keys (`phx_`) are not project tokens and never match.
 *
 * Cheap on the hot path: `load` asks Postgres once per batch at most, only for the projects it
 * has not seen, has not checked for `ttlMs` (`unknownTtlMs` for an id no project has), or whose
 * cached token a message of the batch does not match (it may be the project's new token, reset
 * since): a flood of bad tokens costs a query per batch, not per message. `belongs` is then a Map
 * lookup.
 *
 * NOTE: a project whose token was reset: events still on the queue with the old token are taken
 * for `replacedTokenGraceMs` once this cache has seen the new one; a process that never saw the
 * old token (started after the reset) dead-letters them, with the reason.
 */
export class TeamTokenCache {
  private readonly teams = new Map<number, TeamToken>();
  private readonly ttlMs: number;
  private readonly unknownTtlMs: number;
  private readonly replacedTokenGraceMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    options: TeamTokenCacheOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 60_000;
    this.unknownTtlMs = options.unknownTtlMs ?? 5_000;
    this.replacedTokenGraceMs = options.replacedTokenGraceMs ?? 10 * 60_000;
    this.maxEntries = options.maxEntries ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  /** Reads what `belongs` needs to answer for these messages: one query, or none. Throws when Postgres does. */
  async load(claims: readonly ClaimedProject[]): Promise<void> {
    const now = this.now();
    const wanted = new Set<number>();
    for (const { team_id: teamId, token } of claims) {
      if (!isTeamId(teamId) || wanted.has(teamId)) continue;
      const cached = this.teams.get(teamId);
      if (!cached || !this.answers(cached, token, now)) wanted.add(teamId);
    }
    if (wanted.size === 0) return;
    const ids = [...wanted];
    const { rows } = await this.pool.query<{ id: number; api_token: string }>(
      'SELECT id, api_token FROM teams WHERE id = ANY($1::int[])',
      [ids],
    );
    const tokens = new Map(rows.map((row) => [row.id, row.api_token]));
    for (const teamId of ids) this.remember(teamId, tokens.get(teamId) ?? null, now);
  }

  /**
   * False when the message names a project that exists and its token is not that project's.
   * True for a project that does not exist (person processing drops those as `unknown_team`) and
   * for a `team_id` that is not a project id (parsing dead-letters those): neither is stored.
   */
  belongs({ team_id: teamId, token }: ClaimedProject): boolean {
    if (!isTeamId(teamId)) return true;
    const cached = this.teams.get(teamId);
    if (!cached || cached.token === null || cached.token === token) return true;
    return this.isReplaced(cached, token, this.now());
  }

  /** The token the project had before its last reset, still within its grace. */
  private isReplaced(cached: TeamToken, token: unknown, now: number): boolean {
    return cached.replaced !== undefined && cached.replaced.token === token && now < cached.replaced.until;
  }

  /** Whether the cached entry can answer for this token without asking Postgres again. */
  private answers(cached: TeamToken, token: unknown, now: number): boolean {
    const age = now - cached.checkedAt;
    if (cached.token === null) return age < this.unknownTtlMs;
    if (age >= this.ttlMs) return false;
    return cached.token === token || this.isReplaced(cached, token, now);
  }

  private remember(teamId: number, token: string | null, now: number): void {
    const before = this.teams.get(teamId);
    let replaced = before?.replaced;
    if (before?.token && token !== before.token) {
      replaced = { token: before.token, until: now + this.replacedTokenGraceMs };
    }
    this.teams.delete(teamId);
    if (this.teams.size >= this.maxEntries) {
      const [oldest] = this.teams.keys();
      this.teams.delete(oldest);
    }
    this.teams.set(teamId, { token, checkedAt: now, replaced });
  }
}
