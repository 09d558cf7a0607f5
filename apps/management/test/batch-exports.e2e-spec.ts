import { randomBytes, randomUUID } from 'node:crypto';
import { insertEvents } from '@hogbase/clickhouse';
import { createTestClickHouse, type TestClickHouse } from '@hogbase/clickhouse/testing';
import { SecretBox } from '@hogbase/config';
import { BatchExport, BatchExportRun } from '@hogbase/postgres';
import { UUID_PATTERN as UUID } from '@hogbase/test-support';
import { startManagementTestApp, type ApiClient, type ManagementTestApp } from './management-test-app';

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A 400 `invalid_input` naming the field `attr` and saying `detail`, as PostHog answers an invalid field. */
function expectInvalidInput(response: { status: number; body: unknown }, attr: string, detail: string): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status: 400,
    body: { type: 'validation_error', code: 'invalid_input', attr, detail },
  });
}

const S3_CONFIG = {
  bucket_name: 'exports',
  region: 'us-east-1',
  prefix: 'posthog/{table}/{year}-{month}-{day}',
  aws_access_key_id: 'AKIAEXAMPLE',
  aws_secret_access_key: 'very-secret',
  compression: 'gzip',
};

describe('batch exports (/api/organizations/:organization_id/batch_exports/ and the project twins)', () => {
  let testApp: ManagementTestApp;
  let clickhouse: TestClickHouse;
  let api: ApiClient;
  let organizationId: string;
  let projectId: number;
  const encryptionKey = randomBytes(32);

  const orgPath = (suffix = '', org = organizationId) => `/api/organizations/${org}/batch_exports/${suffix}`;
  const projectPath = (suffix = '', project = projectId) =>
    `/api/projects/${project}/batch_exports/${suffix}`;

  async function createExport(body: Record<string, unknown> = {}, client = api, path = orgPath()) {
    const response = await client.post(path, {
      name: 'S3 hourly',
      interval: 'hour',
      destination: { type: 'S3', config: S3_CONFIG },
      ...body,
    });
    expect(response.status).toBe(201);
    return response.body as Record<string, any>;
  }

  beforeAll(async () => {
    clickhouse = await createTestClickHouse();
    testApp = await startManagementTestApp(
      { encryptionKeys: [encryptionKey] },
      { clickhouse: { database: clickhouse.database } },
    );
    const owner = await testApp.createOwner('owner@batch-exports.test', 'Batch exports organization');
    ({ api, organizationId, projectId } = owner);
  });

  afterAll(async () => {
    await testApp?.close();
    await clickhouse?.drop();
  });

  /** Events of the project at these times (ClickHouse's `YYYY-MM-DD hh:mm:ss` in UTC). */
  async function eventsAt(team: number, ...times: string[]): Promise<void> {
    await insertEvents(
      clickhouse.client,
      clickhouse.database,
      times.map((time) => ({
        uuid: randomUUID(),
        event: '$pageview',
        properties: '{}',
        timestamp: time,
        team_id: team,
        distinct_id: 'visitor',
        created_at: time,
        person_id: randomUUID(),
      })),
    );
  }

  it("creates an export of the organization's only project: 201 with every field, secrets left out", async () => {
    const created = await createExport({ start_at: '2026-01-01T00:00:00Z', hogql_query: null });
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      team_id: projectId,
      name: 'S3 hourly',
      model: 'events',
      destination: {
        type: 'S3',
        config: {
          bucket_name: 'exports',
          region: 'us-east-1',
          prefix: 'posthog/{table}/{year}-{month}-{day}',
          compression: 'gzip',
          file_format: 'JSONLines',
        },
      },
      interval: 'hour',
      paused: false,
      created_at: expect.stringMatching(ISO_TIMESTAMP),
      last_updated_at: expect.stringMatching(ISO_TIMESTAMP),
      last_paused_at: null,
      start_at: '2026-01-01T00:00:00.000Z',
      end_at: null,
      latest_runs: [],
      hogql_query: null,
      schema: null,
      filters: null,
    });
    expect((await api.get(orgPath(`${created.id}/`))).body).toEqual(created);
    expect((await api.get(projectPath(`${created.id}/`))).body).toEqual(created);
  });

  it('stores the destination config sealed: no secret in the row', async () => {
    const created = await createExport();
    const row = await testApp.dataSource
      .getRepository(BatchExport)
      .findOneByOrFail({ id: created.id as string });
    expect(row.destinationConfig).toMatch(/^v1\./);
    expect(row.destinationConfig).not.toContain('very-secret');
    expect(row.destinationConfig).not.toContain('AKIAEXAMPLE');
  });

  /** The destination config as stored: opened with the test app's key. */
  async function storedConfig(id: string): Promise<{ type: string; config: Record<string, unknown> }> {
    const row = await testApp.dataSource.getRepository(BatchExport).findOneByOrFail({ id });
    return {
      type: row.destinationType,
      config: JSON.parse(new SecretBox([encryptionKey]).open(row.destinationConfig)) as Record<
        string,
        unknown
      >,
    };
  }

  it('merges the config on PATCH, keeping the secrets it never shows', async () => {
    const created = await createExport();
    const patched = await api.patch(orgPath(`${created.id}/`), {
      name: 'renamed',
      destination: { type: 'S3', config: { prefix: 'elsewhere/' } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.name).toBe('renamed');
    expect(patched.body.destination.config).toEqual({ ...created.destination.config, prefix: 'elsewhere/' });
    expect(await storedConfig(created.id as string)).toEqual({
      type: 'S3',
      config: { ...S3_CONFIG, file_format: 'JSONLines', prefix: 'elsewhere/' },
    });
  });

  describe('destination secrets', () => {
    const POSTGRES_CONFIG = {
      host: 'warehouse.example.com',
      port: 5432,
      database: 'warehouse',
      user: 'exporter',
      password: 'pg-very-secret',
      table_name: 'events',
    };
    const HTTP_CONFIG = { url: 'https://ingest.example.com/batch', token: 'phc_http_secret' };
    const SECRET_VALUES = ['AKIAEXAMPLE', 'very-secret', 'exporter', 'pg-very-secret', 'phc_http_secret'];

    /** Every answer that shows the export: retrieve (both prefixes), the lists, pause and unpause. */
    async function everyAnswer(id: string): Promise<unknown[]> {
      const answers: unknown[] = [
        (await api.get(orgPath(`${id}/`))).body,
        (await api.get(projectPath(`${id}/`))).body,
        (await api.get(orgPath())).body,
        (await api.get(projectPath())).body,
        (await api.post(orgPath(`${id}/pause/`))).body,
        (await api.post(orgPath(`${id}/unpause/`))).body,
      ];
      expect(JSON.stringify(answers)).toContain(id);
      return answers;
    }

    it("drops the old type's config on a type change: no answer or row keeps the S3 keys", async () => {
      const created = await createExport();
      const moved = await api.patch(orgPath(`${created.id}/`), { destination: { type: 'NoOp', config: {} } });
      expect(moved.status).toBe(200);
      expect(moved.body.destination).toEqual({ type: 'NoOp', config: {} });
      for (const answer of await everyAnswer(created.id as string)) {
        for (const secret of SECRET_VALUES) expect(JSON.stringify(answer)).not.toContain(secret);
      }
      expect(await storedConfig(created.id as string)).toEqual({ type: 'NoOp', config: {} });

      // Nor does a type change pick up keys of the old type that the new one shares a name with.
      const postgres = await createExport({ destination: { type: 'Postgres', config: POSTGRES_CONFIG } });
      const toS3 = await api.patch(orgPath(`${postgres.id}/`), {
        destination: {
          type: 'S3',
          config: {
            bucket_name: 'b',
            region: 'eu-west-1',
            aws_access_key_id: 'k',
            aws_secret_access_key: 's',
          },
        },
      });
      expect(toS3.status).toBe(200);
      expect((await storedConfig(postgres.id as string)).config).toEqual({
        bucket_name: 'b',
        region: 'eu-west-1',
        aws_access_key_id: 'k',
        aws_secret_access_key: 's',
        file_format: 'JSONLines',
      });
      // A type change that leaves out what the new type needs is a 400, not a merge with the old.
      const toHttp = await api.patch(orgPath(`${postgres.id}/`), {
        destination: { type: 'HTTP', config: { url: 'https://example.com' } },
      });
      expect(toHttp.status).toBe(400);
      expect(toHttp.body).toMatchObject({
        attr: 'destination',
        detail: 'The HTTP destination needs token in its config.',
      });
    });

    it('shows no key that is a secret in any type, whatever the export type, in every answer', async () => {
      // A row as an older server left it: a NoOp export whose config still holds other types' secrets.
      const created = await createExport({ destination: { type: 'NoOp', config: {} } });
      await testApp.dataSource.getRepository(BatchExport).update(
        { id: created.id as string },
        {
          destinationConfig: new SecretBox([encryptionKey]).seal(
            JSON.stringify({
              ...S3_CONFIG,
              ...POSTGRES_CONFIG,
              ...HTTP_CONFIG,
              nested: { password: 'pg-very-secret', kept: 1 },
              client_secret: 'very-secret',
            }),
          ),
        },
      );
      const answers = await everyAnswer(created.id as string);
      for (const answer of answers) {
        for (const secret of SECRET_VALUES) expect(JSON.stringify(answer)).not.toContain(secret);
      }
      expect((answers[0] as { destination: { config: Record<string, unknown> } }).destination.config).toEqual(
        {
          bucket_name: 'exports',
          region: 'us-east-1',
          prefix: 'posthog/{table}/{year}-{month}-{day}',
          compression: 'gzip',
          host: 'warehouse.example.com',
          port: 5432,
          database: 'warehouse',
          table_name: 'events',
          url: 'https://ingest.example.com/batch',
          nested: { kept: 1 },
        },
      );
    });

    it.each([
      ['HTTP', { url: 'https://collector.attacker.test/batch' }, HTTP_CONFIG, 'url', ['token']],
      ['Postgres', { host: 'db.attacker.test' }, POSTGRES_CONFIG, 'host', ['user', 'password']],
      ['Postgres', { port: '6543' }, POSTGRES_CONFIG, 'port', ['user', 'password']],
      ['Postgres', { database: 'other' }, POSTGRES_CONFIG, 'database', ['user', 'password']],
      [
        'Postgres',
        { has_self_signed_cert: true },
        POSTGRES_CONFIG,
        'has_self_signed_cert',
        ['user', 'password'],
      ],
      [
        'S3',
        { endpoint_url: 'https://s3.attacker.test' },
        S3_CONFIG,
        'endpoint_url',
        ['aws_access_key_id', 'aws_secret_access_key'],
      ],
      [
        'S3',
        { bucket_name: 'attacker-bucket' },
        S3_CONFIG,
        'bucket_name',
        ['aws_access_key_id', 'aws_secret_access_key'],
      ],
    ] as const)(
      'refuses a %s target change (%j) without the secrets re-entered, and takes it with them',
      async (type, change, config, field, secrets) => {
        const created = await createExport({ destination: { type, config } });
        const before = await storedConfig(created.id as string);
        const refused = await api.patch(orgPath(`${created.id}/`), { destination: { type, config: change } });
        expectInvalidInput(
          refused,
          'destination',
          `Changing ${field} needs ${secrets.join(', ')} in the same request: the stored ${secrets.length === 1 ? 'secret is' : 'secrets are'} not sent to a new target.`,
        );
        for (const secret of SECRET_VALUES) expect(JSON.stringify(refused.body)).not.toContain(secret);
        expect(await storedConfig(created.id as string)).toEqual(before);

        // One secret of two is not enough.
        const [first, second]: readonly string[] = secrets;
        if (second !== undefined) {
          const partly = await api.patch(orgPath(`${created.id}/`), {
            destination: { type, config: { ...change, [second]: 'new-secret' } },
          });
          expect(partly.status).toBe(400);
          expect(partly.body.detail).toContain(`needs ${first} in the same request`);
        }

        const fresh = Object.fromEntries(secrets.map((key) => [key, `new-${key}`]));
        const taken = await api.patch(orgPath(`${created.id}/`), {
          destination: { type, config: { ...change, ...fresh } },
        });
        expect(taken.status).toBe(200);
        for (const key of secrets) expect(taken.body.destination.config).not.toHaveProperty(key);
        expect((await storedConfig(created.id as string)).config).toMatchObject(fresh);
      },
    );

    it('keeps the stored secrets when a PATCH repeats the same target', async () => {
      const created = await createExport({ destination: { type: 'Postgres', config: POSTGRES_CONFIG } });
      const patched = await api.patch(orgPath(`${created.id}/`), {
        destination: {
          type: 'Postgres',
          config: { host: 'warehouse.example.com', port: '5432', table_name: 'other' },
        },
      });
      expect(patched.status).toBe(200);
      expect((await storedConfig(created.id as string)).config).toMatchObject({
        user: 'exporter',
        password: 'pg-very-secret',
        table_name: 'other',
      });
    });

    it.each(['/var/run/postgresql', '/tmp', 'db/../..', 'localhost\\sock', 'db host'])(
      'refuses the Postgres host %j (a Unix-socket path, not a host) on create and on PATCH',
      async (host) => {
        const detail = 'host must be a host name or an IP address (not a Unix socket path).';
        const created = await api.post(orgPath(), {
          name: 'socket',
          interval: 'hour',
          destination: { type: 'Postgres', config: { ...POSTGRES_CONFIG, host } },
        });
        expectInvalidInput(created, 'destination', detail);
        const existing = await createExport({ destination: { type: 'Postgres', config: POSTGRES_CONFIG } });
        const patched = await api.patch(orgPath(`${existing.id}/`), {
          destination: { type: 'Postgres', config: { ...POSTGRES_CONFIG, host } },
        });
        expectInvalidInput(patched, 'destination', detail);
      },
    );
  });

  describe("S3 keys: the export's own, never the server's AWS identity unless BATCH_EXPORT_S3_SERVER_CREDENTIALS", () => {
    const { aws_access_key_id: _id, aws_secret_access_key: _secret, ...KEYLESS } = S3_CONFIG;
    const REFUSED =
      'The S3 destination needs aws_access_key_id, aws_secret_access_key in its config: this server does not lend its own AWS credentials to exports.';

    it('refuses an S3 export without keys on create: 400 naming the keys, nothing saved', async () => {
      const before = await testApp.dataSource.getRepository(BatchExport).count();
      for (const config of [KEYLESS, { ...KEYLESS, aws_access_key_id: '', aws_secret_access_key: null }]) {
        const refused = await api.post(orgPath(), {
          name: 'keyless',
          interval: 'hour',
          destination: { type: 'S3', config },
        });
        expectInvalidInput(refused, 'destination', REFUSED);
      }
      const oneKey = await api.post(projectPath(), {
        name: 'one key',
        interval: 'hour',
        destination: { type: 'S3', config: { ...KEYLESS, aws_access_key_id: 'AKIAEXAMPLE' } },
      });
      expectInvalidInput(
        oneKey,
        'destination',
        'The S3 destination needs aws_secret_access_key in its config: aws_access_key_id and aws_secret_access_key go together.',
      );
      expect(await testApp.dataSource.getRepository(BatchExport).count()).toBe(before);
    });

    it('refuses a PATCH that would leave an S3 export without keys, and keeps the stored ones', async () => {
      const created = await createExport();
      const before = await storedConfig(created.id as string);
      const cleared = await api.patch(orgPath(`${created.id}/`), {
        destination: { type: 'S3', config: { aws_access_key_id: null, aws_secret_access_key: '' } },
      });
      expectInvalidInput(cleared, 'destination', REFUSED);

      const noop = await createExport({ destination: { type: 'NoOp', config: {} } });
      const toS3 = await api.patch(projectPath(`${noop.id}/`), {
        destination: { type: 'S3', config: KEYLESS },
      });
      expectInvalidInput(toS3, 'destination', REFUSED);

      expect(await storedConfig(created.id as string)).toEqual(before);
      expect(await storedConfig(noop.id as string)).toEqual({ type: 'NoOp', config: {} });
    });

    it('takes an S3 export without keys where the operator set BATCH_EXPORT_S3_SERVER_CREDENTIALS=true', async () => {
      const lending = await startManagementTestApp({
        encryptionKeys: [encryptionKey],
        batchExportS3ServerCredentials: true,
      });
      try {
        const owner = await lending.createOwner('lending@batch-exports.test', 'Single-tenant organization');
        const path = `/api/organizations/${owner.organizationId}/batch_exports/`;
        const created = await owner.api.post(path, {
          name: 'keyless',
          interval: 'hour',
          destination: { type: 'S3', config: KEYLESS },
        });
        expect(created.status).toBe(201);
        expect(created.body.destination).toEqual({
          type: 'S3',
          config: { ...KEYLESS, file_format: 'JSONLines' },
        });
        const patched = await owner.api.patch(`${path}${created.body.id}/`, {
          destination: { type: 'S3', config: { bucket_name: 'other' } },
        });
        expect(patched.status).toBe(200);
        // One key without the other is still a mistake, not a cue to use the server's identity.
        const oneKey = await owner.api.patch(`${path}${created.body.id}/`, {
          destination: { type: 'S3', config: { aws_access_key_id: 'AKIAEXAMPLE' } },
        });
        expect(oneKey.status).toBe(400);
        expect(oneKey.body.detail).toContain('aws_access_key_id and aws_secret_access_key go together');
      } finally {
        await lending.close();
      }
    });
  });

  it('exports persons as JSONLines to S3 or to Postgres only: a 400 naming why for HTTP or Parquet, on create and on PATCH', async () => {
    const created = await createExport({ model: 'persons' });
    expect(created.model).toBe('persons');

    const refusals = [
      [
        { type: 'HTTP', config: { url: 'https://example.com', token: 'phc_x' } },
        'The persons model can only be exported as JSONLines to S3 or to Postgres, not to HTTP.',
      ],
      [
        { type: 'S3', config: { ...S3_CONFIG, file_format: 'Parquet', compression: 'zstd' } },
        'The persons model can only be exported as JSONLines to S3 or to Postgres, not as Parquet to S3.',
      ],
    ] as const;
    for (const [destination, detail] of refusals) {
      const refused = await api.post(orgPath(), {
        name: 'persons',
        interval: 'hour',
        model: 'persons',
        destination,
      });
      expectInvalidInput(refused, 'model', detail);
      const patched = await api.patch(orgPath(`${created.id}/`), { destination });
      expectInvalidInput(patched, 'model', detail);
    }

    // An events export to HTTP cannot become a persons export either.
    const http = await createExport({
      destination: { type: 'HTTP', config: { url: 'https://example.com', token: 'phc_x' } },
    });
    const switched = await api.patch(orgPath(`${http.id}/`), { model: 'persons' });
    expect(switched.status).toBe(400);
    expect(switched.body.detail).toBe(refusals[0][1]);

    const toPostgres = await api.patch(orgPath(`${created.id}/`), {
      destination: {
        type: 'Postgres',
        config: { host: 'db', database: 'warehouse', user: 'posthog', password: 'pw', table_name: 'persons' },
      },
    });
    expect(toPostgres.status).toBe(200);
    const row = await testApp.dataSource
      .getRepository(BatchExport)
      .findOneByOrFail({ id: created.id as string });
    expect(row).toMatchObject({ model: 'persons', destinationType: 'Postgres' });
  });

  it('lists the exports of the organization and of the project, newest first, in the pagination envelope', async () => {
    const created = await createExport({ name: 'listed' });
    for (const path of [orgPath(), projectPath()]) {
      const listed = await api.get(path);
      expect(listed.status).toBe(200);
      expect(listed.body).toMatchObject({ next: null, previous: null });
      expect(listed.body.count).toBe(listed.body.results.length);
      expect(listed.body.results[0].id).toBe(created.id);
    }
  });

  it('pauses and unpauses, answering 200 with the export', async () => {
    const created = await createExport();
    const paused = await api.post(orgPath(`${created.id}/pause/`));
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      id: created.id,
      paused: true,
      last_paused_at: expect.stringMatching(ISO_TIMESTAMP),
    });
    const unpaused = await api.post(projectPath(`${created.id}/unpause/`), { backfill: true });
    expect(unpaused.status).toBe(200);
    expect(unpaused.body).toMatchObject({ paused: false, last_paused_at: paused.body.last_paused_at });
  });

  it('stores last_paused_at as the client sends it on create and PATCH (null clears it), and answers it', async () => {
    const created = await createExport({ paused: true, last_paused_at: '2026-03-01T10:00:00+02:00' });
    expect(created).toMatchObject({ paused: true, last_paused_at: '2026-03-01T08:00:00.000Z' });
    expect((await api.get(orgPath(`${created.id}/`))).body.last_paused_at).toBe('2026-03-01T08:00:00.000Z');

    // Without an offset the time is UTC, whatever the server's own time zone.
    const patched = await api.patch(projectPath(`${created.id}/`), { last_paused_at: '2026-04-02T03:04:05' });
    expect(patched.status).toBe(200);
    expect(patched.body.last_paused_at).toBe('2026-04-02T03:04:05.000Z');
    const row = await testApp.dataSource
      .getRepository(BatchExport)
      .findOneByOrFail({ id: created.id as string });
    expect(row.lastPausedAt?.toISOString()).toBe('2026-04-02T03:04:05.000Z');

    const cleared = await api.patch(orgPath(`${created.id}/`), { last_paused_at: null });
    expect(cleared.body).toMatchObject({ paused: true, last_paused_at: null });
    expect((await api.get(orgPath(`${created.id}/`))).body.last_paused_at).toBeNull();
  });

  it("takes the client's last_paused_at over the pause's own time when a PATCH pauses, and now without one", async () => {
    const created = await createExport();
    const given = await api.patch(orgPath(`${created.id}/`), {
      paused: true,
      last_paused_at: '2025-12-31T23:00:00Z',
    });
    expect(given.body).toMatchObject({ paused: true, last_paused_at: '2025-12-31T23:00:00.000Z' });

    const other = await createExport();
    const before = Date.now();
    const pausedNow = await api.patch(orgPath(`${other.id}/`), { paused: true });
    expect(pausedNow.body.paused).toBe(true);
    expect(Date.parse(pausedNow.body.last_paused_at as string)).toBeGreaterThanOrEqual(before - 1000);
  });

  it.each([['not a date'], [12], [true], ['2026-13-01T00:00:00Z']])(
    'refuses last_paused_at %j on create and on PATCH with a 400 naming the field, storing nothing',
    async (value) => {
      const created = await createExport();
      for (const response of [
        await api.post(orgPath(), {
          name: 'bad',
          interval: 'hour',
          destination: { type: 'S3', config: S3_CONFIG },
          last_paused_at: value,
        }),
        await api.patch(orgPath(`${created.id}/`), { last_paused_at: value }),
      ]) {
        expectInvalidInput(response, 'last_paused_at', expect.stringMatching(/^Datetime has wrong format/));
      }
      expect((await api.get(orgPath(`${created.id}/`))).body.last_paused_at).toBeNull();
    },
  );

  it('soft-deletes: 204, then 404, and gone from the lists', async () => {
    const created = await createExport();
    expect((await api.delete(orgPath(`${created.id}/`))).status).toBe(204);
    expect((await api.get(orgPath(`${created.id}/`))).status).toBe(404);
    expect((await api.delete(orgPath(`${created.id}/`))).status).toBe(404);
    expect((await api.get(orgPath())).body.results.map((item: { id: string }) => item.id)).not.toContain(
      created.id,
    );
    const row = await testApp.dataSource
      .getRepository(BatchExport)
      .findOneByOrFail({ id: created.id as string });
    expect(row).toMatchObject({ deleted: true, paused: true });
  });

  it.each([
    [{ interval: 'minute' }, 'invalid_choice', 'interval', '"minute" is not a valid choice.'],
    [{ model: 'sessions' }, 'invalid_choice', 'model', '"sessions" is not a valid choice.'],
    [{ name: '' }, 'blank', 'name', 'This field may not be blank.'],
    [{ destination: undefined }, 'required', 'destination', 'This field is required.'],
    [{ destination: { config: {} } }, 'required', 'destination__type', 'This field is required.'],
    [
      { destination: { type: 'Snowflake', config: {} } },
      'invalid_input',
      'destination',
      "Destination type Snowflake is not supported by this server. Supported types are ['S3', 'Postgres', 'HTTP', 'NoOp'].",
    ],
    [
      { destination: { type: 'S3', config: { ...S3_CONFIG, file_format: 'CSV' } } },
      'invalid_input',
      'destination',
      "File format CSV is not supported. Supported file formats are ['JSONLines', 'Parquet']",
    ],
    [
      {
        destination: { type: 'S3', config: { ...S3_CONFIG, file_format: 'Parquet', compression: 'brotli' } },
      },
      'invalid_input',
      'destination',
      "Compression brotli is not supported for file format Parquet. Supported compressions are ['zstd', 'snappy', 'gzip']",
    ],
    [
      { destination: { type: 'HTTP', config: { url: 'ftp://example.com', token: 'phc_x' } } },
      'invalid_input',
      'destination',
      'url must be an http or https URL.',
    ],
    [
      { destination: { type: 'Postgres', config: { host: 'db' } } },
      'invalid_input',
      'destination',
      'The Postgres destination needs database, user, password, table_name in its config.',
    ],
    [
      { start_at: '2026-02-01T00:00:00Z', end_at: '2026-01-01T00:00:00Z' },
      'invalid_input',
      'end_at',
      "The 'start_at' of a batch export must be before its 'end_at'.",
    ],
    [
      { start_at: 'yesterday' },
      'invalid_input',
      'start_at',
      expect.stringMatching(/^Datetime has wrong format/),
    ],
    [{ team_id: 999_999 }, 'does_not_exist', 'team_id', 'Invalid pk "999999" - object does not exist.'],
  ])('refuses %j with a 400 naming the field', async (body, code, attr, detail) => {
    const response = await api.post(orgPath(), {
      name: 'bad',
      interval: 'hour',
      destination: { type: 'S3', config: S3_CONFIG },
      ...body,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ type: 'validation_error', code, attr, detail });
  });

  it("answers 404 for another organization's export, a malformed id and an unknown one alike", async () => {
    const created = await createExport();
    const stranger = await testApp.createOwner('stranger@batch-exports.test', 'Stranger organization');
    for (const path of [
      orgPath(`${created.id}/`, stranger.organizationId),
      projectPath(`${created.id}/`, stranger.projectId),
      orgPath('00000000-0000-4000-8000-000000000000/'),
      orgPath('not-a-uuid/'),
    ]) {
      const response = await stranger.api.get(path);
      expect(response.status).toBe(404);
    }
    expect((await stranger.api.post(orgPath(`${created.id}/pause/`, stranger.organizationId))).status).toBe(
      404,
    );
    expect((await api.get(orgPath(`${created.id}/`))).body.paused).toBe(false);
  });

  it('needs team_id when the organization has several projects, and takes only its own', async () => {
    const owner = await testApp.createOwner('two-projects@batch-exports.test', 'Two projects');
    const second = await owner.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
      name: 'Second',
    });
    expect(second.status).toBe(201);
    const body = { name: 'x', interval: 'day', destination: { type: 'NoOp', config: {} } };
    const ambiguous = await owner.api.post(orgPath('', owner.organizationId), body);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.attr).toBe('team_id');
    const chosen = await owner.api.post(orgPath('', owner.organizationId), {
      ...body,
      team_id: second.body.id,
    });
    expect(chosen.status).toBe(201);
    expect(chosen.body.team_id).toBe(second.body.id);
    const foreign = await owner.api.post(orgPath('', owner.organizationId), { ...body, team_id: projectId });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('does_not_exist');
  });

  it('lists through a project-scoped key only the exports of its projects', async () => {
    const owner = await testApp.createOwner('scoped@batch-exports.test', 'Scoped keys');
    const second = await owner.api.post(`/api/organizations/${owner.organizationId}/projects/`, {
      name: 'Second',
    });
    const body = { name: 'x', interval: 'day', destination: { type: 'NoOp', config: {} } };
    const first = await owner.api.post(orgPath('', owner.organizationId), {
      ...body,
      team_id: owner.projectId,
    });
    const other = await owner.api.post(orgPath('', owner.organizationId), {
      ...body,
      team_id: second.body.id,
    });
    const key = await testApp.createKey('scoped@batch-exports.test', ['batch_export:read'], {
      projects: [owner.projectId],
    });
    const scoped = testApp.client(`Bearer ${key}`);
    const listed = await scoped.get(orgPath('', owner.organizationId));
    expect(listed.status).toBe(200);
    expect(listed.body.results.map((item: { id: string }) => item.id)).toEqual([first.body.id]);
    expect((await scoped.get(orgPath(`${other.body.id}/`, owner.organizationId))).status).toBe(404);
  });

  it("stores a HogQL query as PostHog's schema, and refuses one that is not a single SELECT from events", async () => {
    const created = await createExport({
      hogql_query: 'SELECT uuid, event, properties.$browser AS browser FROM events',
    });
    expect(created.schema).toEqual({
      fields: [
        { expression: 'uuid', alias: 'uuid' },
        { expression: 'event', alias: 'event' },
        { expression: 'properties.$browser', alias: 'browser' },
      ],
      values: {},
      hogql_query: 'SELECT uuid, event, properties.$browser AS browser FROM events',
    });
    for (const [query, detail] of [
      ['SELECT event FROM events UNION ALL SELECT event FROM events', 'UNIONs are not supported'],
      ['SELECT 1', 'Query must SELECT FROM events'],
      ['SELECT event FROM persons', 'Query must only SELECT FROM events'],
      ['SELECT event FROM events e JOIN events f ON e.uuid = f.uuid', 'JOINs are not supported'],
      ['SELEC nothing', 'Failed to parse query'],
    ]) {
      const refused = await api.post(orgPath(), {
        name: 'bad query',
        interval: 'hour',
        destination: { type: 'NoOp', config: {} },
        hogql_query: query,
      });
      expect({ query, status: refused.status, body: refused.body }).toEqual({
        query,
        status: 400,
        body: { type: 'validation_error', code: 'invalid_input', attr: 'hogql_query', detail },
      });
    }
    const patched = await api.patch(orgPath(`${created.id}/`), { hogql_query: null });
    expect(patched.body).toMatchObject({ hogql_query: null, schema: null });
  });

  describe('backfills, runs and logs', () => {
    let team: number;
    const day = (suffix = '') => `/api/projects/${team}/batch_exports/${suffix}`;

    beforeAll(async () => {
      const owner = await testApp.createOwner('backfills@batch-exports.test', 'Backfills');
      team = owner.projectId;
      api = owner.api;
      await eventsAt(team, '2026-01-05 10:15:00', '2026-01-05 13:59:59', '2026-01-07 08:00:00');
    });

    async function hourly(): Promise<Record<string, any>> {
      return createExport({ destination: { type: 'NoOp', config: {} } }, api, day());
    }

    it('creates one run per hour of the range, in order, and shows the backfill with its progress', async () => {
      const batchExport = await hourly();
      const created = await api.post(day(`${batchExport.id}/backfills/`), {
        start_at: '2026-01-05T10:00:00Z',
        end_at: '2026-01-05T14:00:00+00:00',
      });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ backfill_id: expect.stringMatching(UUID) });
      const backfill = await api.get(day(`${batchExport.id}/backfills/${created.body.backfill_id}/`));
      expect(backfill.body).toMatchObject({
        id: created.body.backfill_id,
        batch_export: batchExport.id,
        status: 'Starting',
        // Clamped to the project's first event, as PostHog does; its hour still runs whole.
        start_at: '2026-01-05T10:15:00.000Z',
        end_at: '2026-01-05T14:00:00.000Z',
        total_runs: 4,
        progress: { total_runs: 4, finished_runs: 0, progress: 0 },
      });
      const runs = await api.get(day(`${batchExport.id}/runs/`));
      expect(runs.status).toBe(200);
      expect(runs.body.next).toBeNull();
      expect(
        runs.body.results
          .map((run: Record<string, string>) => [run.data_interval_start, run.data_interval_end])
          .sort(),
      ).toEqual([
        ['2026-01-05T10:00:00.000Z', '2026-01-05T11:00:00.000Z'],
        ['2026-01-05T11:00:00.000Z', '2026-01-05T12:00:00.000Z'],
        ['2026-01-05T12:00:00.000Z', '2026-01-05T13:00:00.000Z'],
        ['2026-01-05T13:00:00.000Z', '2026-01-05T14:00:00.000Z'],
      ]);
      for (const run of runs.body.results) {
        expect(run).toMatchObject({
          status: 'Starting',
          backfill: created.body.backfill_id,
          batch_export: batchExport.id,
        });
      }
      expect((await api.get(day(`${batchExport.id}/`))).body.latest_runs).toHaveLength(4);
      const listed = await api.get(day(`${batchExport.id}/backfills/`));
      expect(listed.body.results.map((item: { id: string }) => item.id)).toEqual([created.body.backfill_id]);
      const logs = await api.get(day(`${batchExport.id}/logs/`));
      expect(logs.body.results[0]).toMatchObject({
        level: 'INFO',
        message: 'Backfill of 4 intervals requested',
      });
    });

    it('clamps a start before the first event, and answers the deprecated backfill action with the export', async () => {
      const batchExport = await hourly();
      const response = await api.post(day(`${batchExport.id}/backfill/`), {
        start_at: '2025-12-31T00:00:00Z',
        end_at: '2026-01-05T12:00:00Z',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: batchExport.id, name: batchExport.name });
      const runs = await testApp.dataSource
        .getRepository(BatchExportRun)
        .find({ where: { batchExportId: batchExport.id as string }, order: { dataIntervalStart: 'ASC' } });
      expect(runs.map((run) => run.dataIntervalStart?.toISOString())).toEqual([
        '2026-01-05T10:00:00.000Z',
        '2026-01-05T11:00:00.000Z',
      ]);
    });

    it.each([
      [
        { start_at: 'soon', end_at: '2026-01-06T00:00:00Z' },
        'Input soon is not a valid ISO formatted datetime.',
        'start_at',
      ],
      [
        { start_at: '2026-01-05T00:00:00', end_at: '2026-01-06T00:00:00Z' },
        'Input 2026-01-05T00:00:00 is naive.',
        'start_at',
      ],
      [
        { start_at: '2026-01-06T00:00:00Z', end_at: '2026-01-05T00:00:00Z' },
        "The initial backfill datetime 'start_at' happens after 'end_at'",
        null,
      ],
      [
        { start_at: '2026-01-01T00:00:00Z', end_at: '2026-01-02T00:00:00Z' },
        'The provided backfill date range contains no data. The earliest possible backfill start date is 2026-01-05 10:15:00',
        null,
      ],
      [
        { start_at: '2026-01-05T00:00:00Z', end_at: '2099-01-01T00:00:00Z' },
        "The provided 'end_at' (2099-01-01T00:00:00.000Z) is too far into the future. Cannot backfill beyond 1 batch period into the future.",
        null,
      ],
    ])("refuses the backfill %j with PostHog's message", async (body, detail, attr) => {
      const batchExport = await hourly();
      const response = await api.post(day(`${batchExport.id}/backfills/`), body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ type: 'validation_error', code: 'invalid_input', detail, attr });
    });

    it('says there is nothing to backfill for a project without events', async () => {
      const empty = await testApp.createOwner('empty@batch-exports.test', 'No events');
      const batchExport = await createExport(
        { destination: { type: 'NoOp', config: {} } },
        empty.api,
        `/api/projects/${empty.projectId}/batch_exports/`,
      );
      const response = await empty.api.post(
        `/api/projects/${empty.projectId}/batch_exports/${batchExport.id}/backfills/`,
        {
          start_at: '2026-01-05T00:00:00Z',
          end_at: '2026-01-06T00:00:00Z',
        },
      );
      expect(response.body.detail).toBe('There is no data to backfill for this model.');
    });

    it('retries a run as a backfill of its interval, and cancels only runs that have not ended', async () => {
      const batchExport = await hourly();
      await api.post(day(`${batchExport.id}/backfills/`), {
        start_at: '2026-01-05T10:00:00Z',
        end_at: '2026-01-05T12:00:00Z',
      });
      const [first, second] = (await api.get(day(`${batchExport.id}/runs/`))).body.results;
      const retried = await api.post(day(`${batchExport.id}/runs/${first.id}/retry/`));
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ backfill_id: expect.stringMatching(UUID) });
      const runs = (await api.get(day(`${batchExport.id}/runs/`))).body.results;
      expect(runs[0]).toMatchObject({
        backfill: retried.body.backfill_id,
        data_interval_start: first.data_interval_start,
        data_interval_end: first.data_interval_end,
      });

      const cancelled = await api.post(day(`${batchExport.id}/runs/${second.id}/cancel/`));
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toEqual({ cancelled: true });
      const again = await api.post(day(`${batchExport.id}/runs/${second.id}/cancel/`));
      expect(again.status).toBe(400);
      expect(again.body.detail).toBe("Cannot cancel a run that is in 'Cancelled' status");
      expect((await api.post(day(`${batchExport.id}/runs/${randomUUID()}/cancel/`))).status).toBe(404);
    });

    it('pages runs 100 at a time with a cursor in next', async () => {
      const batchExport = await hourly();
      await api.post(day(`${batchExport.id}/backfills/`), {
        start_at: '2026-01-05T10:00:00Z',
        end_at: '2026-01-10T10:00:00Z',
      });
      const seen: string[] = [];
      let next: string | null = day(`${batchExport.id}/runs/`);
      while (next) {
        const page: { status: number; body: { results: { id: string }[]; next: string | null } } =
          await api.get(next.replace(/^https?:\/\/[^/]+/, ''));
        expect(page.status).toBe(200);
        seen.push(...page.body.results.map((run: { id: string }) => run.id));
        next = page.body.next;
      }
      expect(seen).toHaveLength(120);
      expect(new Set(seen).size).toBe(120);
      expect((await api.get(day(`${batchExport.id}/runs/?cursor=garbage`))).status).toBe(400);
    });
  });
});
