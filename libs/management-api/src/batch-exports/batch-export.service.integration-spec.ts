import { randomUUID } from 'node:crypto';
import {
  BatchExport,
  BatchExportBackfill,
  BatchExportRun,
  type PersonalApiKey,
  type User,
} from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { ApiError } from '../common/api.error';
import { createFeatureTestingModule, type FeatureTestContext } from '../testing/feature-testing.util';
import { seedProject } from '../testing/fixtures.util';
import { BatchExportRunsService } from './batch-export-runs.service';
import { BatchExportSecrets } from './batch-export-secrets.service';
import type { CreateBatchExportDto } from './batch-export.dto';
import { BatchExportService, projectScope, type BatchExportScope } from './batch-export.service';
import { BatchExportsModule } from './batch-exports.module';

type Caller = ResolvedProject & { user: User };

const S3_CONFIG = {
  bucket_name: 'exports',
  region: 'us-east-1',
  prefix: 'posthog/{table}',
  aws_access_key_id: 'AKIAEXAMPLE',
  aws_secret_access_key: 'very-secret',
};

const HOUR = 3_600_000;

/** The ApiError a call fails with, as `{status, code, attr, detail}`. */
async function failure(
  call: Promise<unknown>,
): Promise<Pick<ApiError, 'status' | 'code' | 'attr' | 'detail'>> {
  const error = await call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (reason: unknown) => reason,
  );
  if (!(error instanceof ApiError)) throw error;
  return { status: error.status, code: error.code, attr: error.attr, detail: error.detail };
}

describe('BatchExportService and BatchExportRunsService', () => {
  let context: FeatureTestContext;
  let exports: BatchExportService;
  let runs: BatchExportRunsService;
  let owner: Caller;
  let scope: BatchExportScope;

  beforeAll(async () => {
    context = await createFeatureTestingModule([BatchExportsModule]);
    exports = context.get(BatchExportService);
    runs = context.get(BatchExportRunsService);
    owner = await seedProject(context.dataSource);
    scope = projectScope(owner);
  });

  afterAll(() => context?.close());

  const stored = (id: string) => context.dataSource.getRepository(BatchExport).findOneByOrFail({ id });
  const exportCount = () => context.dataSource.getRepository(BatchExport).countBy({ teamId: owner.team.id });

  function create(fields: Partial<CreateBatchExportDto> = {}, to: BatchExportScope = scope) {
    return exports.create(to, owner.user.id, {
      name: 'export',
      interval: 'hour',
      destination: { type: 'S3', config: S3_CONFIG },
      ...fields,
    });
  }

  it('refuses a destination config a run could not use, and stores nothing', async () => {
    const before = await exportCount();
    const { aws_access_key_id: _key, aws_secret_access_key: _secret, ...keyless } = S3_CONFIG;
    expect(await failure(create({ destination: { type: 'S3', config: keyless } }))).toMatchObject({
      status: 400,
      attr: 'destination',
      detail: expect.stringContaining('does not lend its own AWS credentials') as string,
    });
    const socket = { host: '/var/run/postgresql', database: 'd', user: 'u', password: 'p', table_name: 't' };
    expect(await failure(create({ destination: { type: 'Postgres', config: socket } }))).toMatchObject({
      status: 400,
      attr: 'destination',
    });
    expect(await exportCount()).toBe(before);
  });

  it('never returns a secret and keeps the stored ones when a PATCH leaves them out', async () => {
    const created = await create();
    const shown = (response: { destination: { config: Record<string, unknown> } }) =>
      Object.keys(response.destination.config);
    expect(shown(created)).not.toEqual(expect.arrayContaining(['aws_secret_access_key']));
    expect(shown(created)).not.toContain('aws_access_key_id');
    expect((await stored(created.id)).destinationConfig).not.toContain('very-secret');

    const updated = await exports.update(scope, created.id, {
      destination: { type: 'S3', config: { prefix: 'other/' } },
    });
    expect(updated.destination.config).toMatchObject({ prefix: 'other/', bucket_name: 'exports' });
    expect(shown(updated)).not.toContain('aws_secret_access_key');
    const [retrieved, listed] = [
      await exports.retrieve(scope, created.id),
      await exports.list(scope, { limit: 100, offset: 0 }),
    ];
    expect(shown(retrieved)).not.toContain('aws_secret_access_key');
    expect(listed.results.flatMap(shown)).not.toContain('aws_secret_access_key');

    const config = await context.get(BatchExportSecrets).unseal((await stored(created.id)).destinationConfig);
    expect(config).toMatchObject({ prefix: 'other/', aws_secret_access_key: 'very-secret' });
  });

  it('refuses to send the stored secrets to a new bucket, and leaves the export as it was', async () => {
    const created = await create();
    expect(
      await failure(
        exports.update(scope, created.id, {
          name: 'renamed',
          destination: { type: 'S3', config: { bucket_name: 'elsewhere' } },
        }),
      ),
    ).toMatchObject({ status: 400, attr: 'destination' });
    const row = await stored(created.id);
    expect(row.name).toBe('export');
    expect((await context.get(BatchExportSecrets).unseal(row.destinationConfig)).bucket_name).toBe('exports');
  });

  it('pauses; unpauses from the interval in progress, or with backfill from where the pause stopped', async () => {
    const created = await create();
    const paused = await exports.setPausedState(scope, created.id, true);
    expect(paused.paused).toBe(true);
    expect(paused.last_paused_at).not.toBeNull();

    const where = new Date('2025-03-01T10:00:00Z');
    await context.dataSource.getRepository(BatchExport).update({ id: created.id }, { scheduledUntil: where });
    await exports.setPausedState(scope, created.id, false, true);
    expect((await stored(created.id)).scheduledUntil).toEqual(where);

    await exports.setPausedState(scope, created.id, true);
    const resumed = await exports.setPausedState(scope, created.id, false);
    expect(resumed.paused).toBe(false);
    expect((await stored(created.id)).scheduledUntil).toBeNull();
  });

  it('unpausing with backfill an export the scheduler never ran starts from the interval of its pause', async () => {
    const created = await create({ interval: 'day', paused: true, last_paused_at: '2025-03-01T10:30:00Z' });
    await exports.setPausedState(scope, created.id, false, true);
    expect((await stored(created.id)).scheduledUntil).toEqual(new Date('2025-03-01T00:00:00Z'));
  });

  describe('backfills', () => {
    const end = new Date('2025-01-01T00:00:00Z');
    const backfillsOf = (batchExportId: string) =>
      context.dataSource.getRepository(BatchExportBackfill).countBy({ batchExportId });

    it('takes a range of 10,000 intervals, one run per interval, and refuses one more', async () => {
      // A persons export: no first event bounds its start.
      const created = await create({ model: 'persons' });
      const range = (hours: number) => ({
        start_at: new Date(end.getTime() - hours * HOUR).toISOString(),
        end_at: end.toISOString(),
      });
      expect(await failure(runs.createBackfill(scope, created.id, range(10_000)))).toMatchObject({
        status: 400,
        detail: expect.stringContaining('at most 10000 can be backfilled at once') as string,
      });
      expect(await backfillsOf(created.id)).toBe(0);

      const { backfill } = await runs.createBackfill(scope, created.id, range(9_999));
      expect(backfill.totalRuns).toBe(9_999);
      expect(
        await context.dataSource.getRepository(BatchExportRun).countBy({ backfillId: backfill.id }),
      ).toBe(9_999);
    });

    it('refuses a range of centuries before listing its intervals', async () => {
      const created = await create({ model: 'persons', interval: 'day' });
      expect(
        await failure(
          runs.createBackfill(scope, created.id, {
            start_at: '0232-01-01T00:00:00Z',
            end_at: end.toISOString(),
          }),
        ),
      ).toMatchObject({ status: 400, detail: expect.stringContaining("intervals of 'day'") as string });
      expect(await backfillsOf(created.id)).toBe(0);
    });
  });

  describe('runs', () => {
    let batchExportId: string;
    let newestFirst: string[];

    beforeAll(async () => {
      batchExportId = (await create({ model: 'persons' })).id;
      const base = new Date('2025-01-01T00:00:00Z').getTime();
      const rows = Array.from({ length: 150 }, (_, index) => ({
        id: randomUUID(),
        batchExportId,
        status: 'Completed' as const,
        dataIntervalStart: new Date(base + index * HOUR),
        dataIntervalEnd: new Date(base + (index + 1) * HOUR),
        // Threes share a creation time, one of them across the page boundary: the id breaks the tie.
        createdAt: new Date(base + Math.floor(index / 3) * 1000),
        lastUpdatedAt: new Date(base),
      }));
      await context.dataSource.getRepository(BatchExportRun).insert(rows);
      newestFirst = [...rows]
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
        .map((row) => row.id);
    });

    it('lists newest first, 100 a page, and the cursor continues where the page ended', async () => {
      const first = await runs.listRuns(scope, batchExportId, undefined);
      expect(first.results.map((run) => run.id)).toEqual(newestFirst.slice(0, 100));
      expect(first.nextCursor).not.toBeNull();
      const second = await runs.listRuns(scope, batchExportId, first.nextCursor!);
      expect(second.results.map((run) => run.id)).toEqual(newestFirst.slice(100));
      expect(second.nextCursor).toBeNull();
    });

    it('answers a cursor it did not make with a 400 on cursor', async () => {
      expect(await failure(runs.listRuns(scope, batchExportId, 'garbage'))).toMatchObject({
        status: 400,
        code: 'invalid_input',
        attr: 'cursor',
      });
    });
  });

  it("answers another project's export, an unknown id and a malformed one alike: 404", async () => {
    const created = await create();
    const stranger = await seedProject(context.dataSource, undefined, 'Stranger');
    const elsewhere = projectScope(stranger);
    const calls: (() => Promise<unknown>)[] = [
      () => exports.retrieve(elsewhere, created.id),
      () => exports.update(elsewhere, created.id, { name: 'taken' }),
      () => exports.setPausedState(elsewhere, created.id, true),
      () => exports.remove(elsewhere, created.id),
      () => runs.createBackfill(elsewhere, created.id, {}),
      () => runs.listRuns(elsewhere, created.id, undefined),
      () => runs.logs(elsewhere, created.id),
      () => exports.retrieve(scope, randomUUID()),
      // The path's pipe passes a malformed id on as null.
      () => exports.retrieve(scope, null),
    ];
    for (const call of calls) expect(await failure(call())).toMatchObject({ status: 404, code: 'not_found' });
    const row = await stored(created.id);
    expect({ name: row.name, paused: row.paused, deleted: row.deleted }).toEqual({
      name: 'export',
      paused: false,
      deleted: false,
    });
  });

  it("on the organization's routes, reaches only the projects the key is scoped to", async () => {
    const created = await create();
    const key = (scopedTeams: number[] | null) => ({ scopedTeams }) as PersonalApiKey;
    const reaching = await exports.organizationScope(owner, key([owner.team.id]));
    expect((await exports.retrieve(reaching, created.id)).id).toBe(created.id);
    const scopedAway = await exports.organizationScope(owner, key([owner.team.id + 1_000]));
    expect(await failure(exports.retrieve(scopedAway, created.id))).toMatchObject({ status: 404 });
  });
});
