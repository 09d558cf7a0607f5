import { createIngestionTestDatabase, type IngestionTestDatabase } from '../testing/ingestion-test.util';
import { TeamTokenCache } from './team-token.cache';

describe('TeamTokenCache', () => {
  let db: IngestionTestDatabase;
  let teamId: number;
  let token: string;
  let clock: number;
  let queries: number;
  let cache: TeamTokenCache;

  beforeAll(async () => {
    db = await createIngestionTestDatabase();
  });

  afterAll(async () => {
    await db?.close();
  });

  beforeEach(async () => {
    teamId = await db.createTeam();
    token = await tokenOf(teamId);
    clock = Date.parse('2024-05-01T10:00:00.000Z');
    queries = 0;
    const counting = {
      query: (...args: Parameters<typeof db.pool.query>) => {
        queries += 1;
        return (db.pool.query as (...a: unknown[]) => unknown)(...args);
      },
    } as Pick<typeof db.pool, 'query'>;
    cache = new TeamTokenCache(counting, { ttlMs: 60_000, replacedTokenGraceMs: 600_000, now: () => clock });
  });

  async function tokenOf(id: number): Promise<string> {
    const { rows } = await db.pool.query<{ api_token: string }>('SELECT api_token FROM teams WHERE id = $1', [
      id,
    ]);
    return rows[0].api_token;
  }

  async function resetToken(id: number): Promise<string> {
    const next = `phc_reset_${crypto.randomUUID()}`;
    await db.pool.query('UPDATE teams SET api_token = $2 WHERE id = $1', [id, next]);
    return next;
  }

  async function belongs(claimedToken: unknown, claimedTeam: unknown = teamId): Promise<boolean> {
    const claim = { team_id: claimedTeam, token: claimedToken };
    await cache.load([claim]);
    return cache.belongs(claim);
  }

  it("takes the project's own token, refuses any other, and asks Postgres about it once per TTL", async () => {
    const other = await db.createTeam();
    expect(await belongs(token)).toBe(true);
    expect(await belongs(await tokenOf(other))).toBe(false);
    expect(await belongs('phc_bogus')).toBe(false);
    // A project secret key or a personal key is not the project's token.
    expect(await belongs('phs_secret')).toBe(false);
    expect(await belongs('phx_personal')).toBe(false);
    queries = 0;
    for (let event = 0; event < 100; event++) expect(await belongs(token)).toBe(true);
    expect(queries).toBe(0);

    clock += 60_000;
    expect(await belongs(token)).toBe(true);
    expect(queries).toBe(1);
  });

  it('leaves a project that does not exist, and a team_id that is no project id, to the later steps', async () => {
    expect(await belongs('phc_any', 2_000_000_000)).toBe(true);
    expect(await belongs('phc_other', 2_000_000_000)).toBe(true);
    expect(await belongs('phc_any', 'not a number')).toBe(true);
    // An id no project has is asked about again only after a while (it may be created meanwhile).
    expect(queries).toBe(1);
  });

  it('takes a reset token at once and the replaced one for its grace only', async () => {
    expect(await belongs(token)).toBe(true);
    const next = await resetToken(teamId);
    // A token that is not the cached one is looked up again: the new one is taken at once.
    expect(await belongs(next)).toBe(true);
    // Events captured with the old token may still be on the queue.
    expect(await belongs(token)).toBe(true);
    clock += 600_000;
    expect(await belongs(token)).toBe(false);
    expect(await belongs(next)).toBe(true);
  });

  it('asks Postgres about the refused tokens of a batch once', async () => {
    const claims = ['phc_bogus', 'phc_other', token].map((claimed) => ({ team_id: teamId, token: claimed }));
    await cache.load(claims);
    expect(claims.map((claim) => cache.belongs(claim))).toEqual([false, false, true]);
    expect(queries).toBe(1);
  });
});
