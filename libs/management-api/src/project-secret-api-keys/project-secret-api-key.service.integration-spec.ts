import { hashPersonalApiKey, ProjectSecretApiKey } from '@hogbase/postgres';
import type { AccessContext, ResolvedProject } from '../auth/access.decorator';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { callerOf } from '../testing/auth-fixtures.util';
import { seedProject } from '../testing/fixtures.util';
import { MAX_PROJECT_SECRET_API_KEYS, ProjectSecretApiKeyService } from './project-secret-api-key.service';
import { ProjectSecretApiKeysModule } from './project-secret-api-keys.module';

const READ_FLAGS = ['feature_flag:read'];

describe('ProjectSecretApiKeyService', () => {
  let context: FeatureTestContext;
  let keys: ProjectSecretApiKeyService;

  beforeAll(async () => {
    context = await createFeatureTestingModule([ProjectSecretApiKeysModule]);
    keys = context.get(ProjectSecretApiKeyService);
  });

  afterAll(async () => {
    await context?.close();
  });

  async function project(): Promise<{ project: ResolvedProject; caller: AccessContext }> {
    const seeded = await seedProject(context.dataSource);
    return { project: seeded, caller: await callerOf(context.dataSource, seeded.user) };
  }

  const stored = (teamId: number) =>
    context.dataSource.getRepository(ProjectSecretApiKey).countBy({ teamId });

  it.each([
    [[], 'This list may not be empty.'],
    [['*'], "Wildcard scope '*' is not allowed for project API keys. Please specify explicit scopes."],
    [['feature_flag:admin'], 'Invalid scope: feature_flag:admin'],
    [
      ['feature_flag:read', 'feature_flag:write'],
      "Scope 'feature_flag:write' can not be assigned to a project secret API key. Allowed scopes: feature_flag:read",
    ],
  ])('refuses the scopes %j with a 400 on scopes, and stores nothing', async (scopes, detail) => {
    const { project: own, caller } = await project();
    await expect(keys.create(caller, own.team, { label: 'k', scopes })).rejects.toMatchObject({
      status: 400,
      detail,
      attr: 'scopes',
    });
    expect(await stored(own.team.id)).toBe(0);
  });

  it('creates a key whose value is answered once and stored only as its hash', async () => {
    const { project: own, caller } = await project();
    const created = await keys.create(caller, own.team, { label: 'flags', scopes: READ_FLAGS });
    expect(created.value).toMatch(/^phs_/);
    const row = await context.dataSource
      .getRepository(ProjectSecretApiKey)
      .findOneByOrFail({ id: created.id });
    expect(row.secureValue).toBe(hashPersonalApiKey(created.value!));
    expect((await keys.retrieve(own.team, created.id)).value).toBeNull();
  });

  it(`holds at most ${MAX_PROJECT_SECRET_API_KEYS} keys per project, even when creations race for the last places`, async () => {
    const { project: own, caller } = await project();
    const racing = 8;
    const free = 3;
    for (let index = 0; index < MAX_PROJECT_SECRET_API_KEYS - free; index++) {
      await keys.create(caller, own.team, { label: `key ${index}`, scopes: READ_FLAGS });
    }
    const outcomes = await Promise.allSettled(
      Array.from({ length: racing }, (_, index) =>
        keys.create(caller, own.team, { label: `racing ${index}`, scopes: READ_FLAGS }),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(free);
    for (const outcome of outcomes.filter((outcome) => outcome.status === 'rejected')) {
      expect(outcome).toMatchObject({
        reason: {
          status: 400,
          detail: `You can only have ${MAX_PROJECT_SECRET_API_KEYS} project secret API keys. Remove an existing key before creating a new one.`,
        },
      });
    }
    expect(await stored(own.team.id)).toBe(MAX_PROJECT_SECRET_API_KEYS);
  });

  it("refuses a label another key of the project has, and keeps a key's own label", async () => {
    const { project: own, caller } = await project();
    const first = await keys.create(caller, own.team, { label: 'one', scopes: READ_FLAGS });
    await keys.create(caller, own.team, { label: 'two', scopes: READ_FLAGS });
    const duplicate = {
      status: 400,
      attr: 'label',
      detail: "Project secret API key with label 'two' already exists.",
    };
    await expect(keys.create(caller, own.team, { label: 'two', scopes: READ_FLAGS })).rejects.toMatchObject(
      duplicate,
    );
    await expect(keys.update(own.team, first.id, { label: 'two' })).rejects.toMatchObject(duplicate);
    await expect(keys.update(own.team, first.id, { label: 'one' })).resolves.toMatchObject({ label: 'one' });
    // Another project may use the same label.
    const other = await project();
    await expect(
      keys.create(other.caller, other.project.team, { label: 'two', scopes: READ_FLAGS }),
    ).resolves.toMatchObject({ label: 'two' });
  });

  it("answers another project's key as one that does not exist, and leaves it as it was", async () => {
    const { project: own, caller } = await project();
    const other = await project();
    const key = await keys.create(caller, own.team, { label: 'mine', scopes: READ_FLAGS });
    const notFound = { status: 404, code: 'not_found' };
    await expect(keys.retrieve(other.project.team, key.id)).rejects.toMatchObject(notFound);
    await expect(keys.update(other.project.team, key.id, { label: 'theirs' })).rejects.toMatchObject(
      notFound,
    );
    await expect(keys.roll(other.project.team, key.id)).rejects.toMatchObject(notFound);
    await expect(keys.remove(other.project.team, key.id)).rejects.toMatchObject(notFound);
    const row = await context.dataSource.getRepository(ProjectSecretApiKey).findOneByOrFail({ id: key.id });
    expect([row.label, row.secureValue]).toEqual(['mine', hashPersonalApiKey(key.value!)]);
  });

  it('rolls a key: a new value replaces the stored hash and the old value no longer matches', async () => {
    const { project: own, caller } = await project();
    const key = await keys.create(caller, own.team, { label: 'rolled', scopes: READ_FLAGS });
    const rolled = await keys.roll(own.team, key.id);
    expect(rolled.value).toMatch(/^phs_/);
    expect(rolled.value).not.toBe(key.value);
    expect(rolled.last_rolled_at).not.toBeNull();
    const row = await context.dataSource.getRepository(ProjectSecretApiKey).findOneByOrFail({ id: key.id });
    expect(row.secureValue).toBe(hashPersonalApiKey(rolled.value!));
  });
});
