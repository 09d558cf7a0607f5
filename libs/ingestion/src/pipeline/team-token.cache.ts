import type { Pool } from 'pg';

export interface TeamTokenCacheOptions {
  ttlMs?: number;
  /** Short: the project may be created meanwhile. An unknown project's messages are dropped by persons. */
  unknownTtlMs?: number;
  /** Capture takes the old token while its own cache holds it (60 s), and those events may still be queued. */
  replacedTokenGraceMs?: number;
  maxEntries?: number;
  now?: () => number;
}

interface TeamToken {
  /** Null: no such project. */
  token: string | null;
  checkedAt: number;
  replaced?: { token: string; until: number };
}

export interface ClaimedProject {
  team_id: unknown;
  token: unknown;
}

function isTeamId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 && value <= 2_147_483_647;
}

/**
 * The events topic is a trust boundary in a shared Kafka: a real project named with a token not its
 * own is refused (`phs_`, `phx_` keys never match). `load` queries once per batch at most, so bad
 * tokens cost a query per batch. After a reset the old token is taken for `replacedTokenGraceMs`.
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

  /** Throws when Postgres does. */
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

  /** True for an unknown project or a non-id `team_id`: persons drop and parsing dead-letters those. */
  belongs({ team_id: teamId, token }: ClaimedProject): boolean {
    if (!isTeamId(teamId)) return true;
    const cached = this.teams.get(teamId);
    if (!cached || cached.token === null || cached.token === token) return true;
    return this.isReplaced(cached, token, this.now());
  }

  private isReplaced(cached: TeamToken, token: unknown, now: number): boolean {
    return cached.replaced !== undefined && cached.replaced.token === token && now < cached.replaced.until;
  }

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
