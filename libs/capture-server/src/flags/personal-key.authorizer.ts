import { createHash } from 'node:crypto';
import type { Pool } from 'pg';

export type KeyCheck = 'ok' | 'unknown_key' | 'missing_scope' | 'no_access';

const READ_SCOPES = ['*', 'feature_flag:read', 'feature_flag:write'];

/** How long an answer is reused: a revoked key or a removed member is refused within this. */
const CHECK_TTL_MS = 10_000;
const MAX_CACHED = 10_000;

/**
 * Whether a personal API key may read a project's flag definitions (local evaluation): the same
 * rules as the management API's guard, in one query. Only the key's SHA-256 is looked up, and
 * answers are reused for a few seconds: every SDK instance polls every 30 s, mostly for a 304.
 */
export class PersonalKeyAuthorizer {
  private readonly answers = new Map<string, { check: KeyCheck; at: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly now: () => number = Date.now,
  ) {}

  async check(presentedKey: string, teamId: number): Promise<KeyCheck> {
    const secureValue = `sha256$${createHash('sha256').update(presentedKey).digest('hex')}`;
    const cacheKey = `${teamId}:${secureValue}`;
    const cached = this.answers.get(cacheKey);
    if (cached && this.now() - cached.at < CHECK_TTL_MS) return cached.check;
    const check = await this.lookup(secureValue, teamId);
    if (this.answers.size >= MAX_CACHED) this.answers.clear();
    this.answers.set(cacheKey, { check, at: this.now() });
    return check;
  }

  private async lookup(secureValue: string, teamId: number): Promise<KeyCheck> {
    const { rows } = await this.pool.query<{
      scopes: string[] | null;
      scoped_teams: number[] | null;
      scoped_organizations: string[] | null;
      organization_id: string;
      is_member: boolean;
    }>(
      `SELECT k.scopes, k.scoped_teams, k.scoped_organizations, t.organization_id,
              EXISTS (SELECT 1 FROM organization_memberships m
                       WHERE m.user_id = u.id AND m.organization_id = t.organization_id) AS is_member
         FROM personal_api_keys k
         JOIN users u ON u.id = k.user_id AND u.is_active
         JOIN teams t ON t.id = $2
        WHERE k.secure_value = $1`,
      [secureValue, teamId],
    );
    const key = rows[0];
    if (!key) return 'unknown_key';
    const scopes = key.scopes ?? [];
    if (scopes.length > 0 && !scopes.some((scope) => READ_SCOPES.includes(scope))) return 'missing_scope';
    if (!key.is_member) return 'no_access';
    if (key.scoped_teams?.length && !key.scoped_teams.includes(teamId)) return 'no_access';
    if (key.scoped_organizations?.length && !key.scoped_organizations.includes(key.organization_id))
      return 'no_access';
    return 'ok';
  }
}
