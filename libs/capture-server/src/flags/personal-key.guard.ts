import { createHash } from 'node:crypto';
import type { Pool } from 'pg';

export type KeyCheck = 'ok' | 'unknown_key' | 'missing_scope' | 'no_access';

const READ_SCOPES = ['*', 'feature_flag:read', 'feature_flag:write'];

/** The management API assigns a project secret API key no other scope. */
const SECRET_KEY_SCOPE = 'feature_flag:read';

export const SECRET_KEY_PREFIX = 'phs_';

/** How long an answer is reused: a revoked key or a removed member is refused within this. */
const CHECK_TTL_MS = 10_000;
const MAX_CACHED = 10_000;

/** At most hourly, as PostHog: auth must not write on every call. */
const LAST_USED_RESOLUTION = '1 hour';

/**
 * Who may read flag definitions: a personal API key (the management API's rules) or the project's
 * secret key (`phs_…`); answers are reused for CHECK_TTL_MS, as every SDK instance polls.
 */
export class PersonalKeyAuthorizer {
  /** By project, then by the key's SHA-256, so a project's answers can be dropped at once. */
  private readonly answers = new Map<number, Map<string, { check: KeyCheck; at: number }>>();
  private cachedCount = 0;

  constructor(
    private readonly pool: Pool,
    private readonly now: () => number = Date.now,
  ) {}

  async check(presentedKey: string, teamId: number): Promise<KeyCheck> {
    const secureValue = secureValueOf(presentedKey);
    const cached = this.answers.get(teamId)?.get(secureValue);
    if (cached && this.now() - cached.at < CHECK_TTL_MS) return cached.check;
    const check = presentedKey.startsWith(SECRET_KEY_PREFIX)
      ? await this.lookupSecretKey(secureValue, teamId)
      : await this.lookup(secureValue, teamId);
    if (this.cachedCount >= MAX_CACHED) this.forgetAll();
    const team = this.answers.get(teamId) ?? new Map<string, { check: KeyCheck; at: number }>();
    this.answers.set(teamId, team);
    if (!team.has(secureValue)) this.cachedCount += 1;
    team.set(secureValue, { check, at: this.now() });
    return check;
  }

  /** What names the project when a request carries no project API key; check() still decides. */
  async secretKeyTeam(presentedKey: string): Promise<number | null> {
    const { rows } = await this.pool.query<{ team_id: number }>(
      'SELECT team_id FROM project_secret_api_keys WHERE secure_value = $1',
      [secureValueOf(presentedKey)],
    );
    return rows[0]?.team_id ?? null;
  }

  /** A key revoked or rolled is refused on its next request rather than within the TTL. */
  forgetTeam(teamId: number): void {
    this.cachedCount -= this.answers.get(teamId)?.size ?? 0;
    this.answers.delete(teamId);
  }

  forgetAll(): void {
    this.answers.clear();
    this.cachedCount = 0;
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

  /** Another project's secret key is refused (403); last_used_at is written in the same statement. */
  private async lookupSecretKey(secureValue: string, teamId: number): Promise<KeyCheck> {
    const { rows } = await this.pool.query<{ team_id: number; scopes: string[] }>(
      `WITH key AS (
         SELECT id, team_id, scopes, last_used_at FROM project_secret_api_keys WHERE secure_value = $1
       ), touched AS (
         UPDATE project_secret_api_keys k SET last_used_at = now()
           FROM key
          WHERE k.id = key.id AND key.team_id = $2 AND $3 = ANY (key.scopes)
            AND (key.last_used_at IS NULL OR key.last_used_at < now() - $4::interval)
       )
       SELECT team_id, scopes FROM key`,
      [secureValue, teamId, SECRET_KEY_SCOPE, LAST_USED_RESOLUTION],
    );
    const key = rows[0];
    if (!key) return 'unknown_key';
    if (key.team_id !== teamId) return 'no_access';
    if (!key.scopes.includes(SECRET_KEY_SCOPE)) return 'missing_scope';
    return 'ok';
  }
}

function secureValueOf(presentedKey: string): string {
  return `sha256$${createHash('sha256').update(presentedKey).digest('hex')}`;
}
