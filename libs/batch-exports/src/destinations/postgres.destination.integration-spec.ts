import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Client } from 'pg';
import { EgressPolicy } from '@hogbase/egress';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import { NonRetryableExportError } from '../batch-export.errors';
import {
  type DestinationFactory,
  type DestinationWriter,
  type ExportChunk,
  type ExportRunInfo,
  type ExportedEventRow,
  type ExportedPersonRow,
} from '../destination.types';
import { createPostgresDestination } from './postgres.destination';

/** The test server listens on loopback, which these tests allow (as an admin may). */
const LOOPBACK_ALLOWED = new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] });
const factory: DestinationFactory = (config, run) => createPostgresDestination(config, run, LOOPBACK_ALLOWED);
const REFUSED = 'resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it';

function runInfo(): ExportRunInfo {
  return {
    runId: randomUUID(),
    batchExportId: randomUUID(),
    teamId: 7,
    model: 'events',
    dataIntervalStart: new Date('2024-03-01T10:00:00Z'),
    dataIntervalEnd: new Date('2024-03-01T11:00:00Z'),
  };
}

function eventRow(index: number, overrides: Partial<ExportedEventRow> = {}): ExportedEventRow {
  const set = { email: `user${index}@example.com` };
  return {
    uuid: `0190f000-0000-7000-8000-${String(index).padStart(12, '0')}`,
    event: index % 2 === 0 ? '$pageview' : '$autocapture',
    timestamp: `2024-03-01T10:${String(index % 60).padStart(2, '0')}:00.123Z`,
    created_at: '2024-03-01T10:59:00Z',
    _inserted_at: '2024-03-01T10:59:30Z',
    distinct_id: `user-${index}`,
    team_id: 7,
    properties: { $ip: '203.0.113.9', $browser: 'Firefox', n: index, $set: set, emoji: 'héllo ✓' },
    elements_chain: 'a:nth-child="1"',
    person_id: randomUUID(),
    person_properties: { plan: 'free' },
    set,
    set_once: null,
    ...overrides,
  };
}

function personRow(distinctId: string, overrides: Partial<ExportedPersonRow> = {}): ExportedPersonRow {
  return {
    team_id: 7,
    distinct_id: distinctId,
    person_id: '0190f000-0000-7000-8000-000000000001',
    properties: { email: `${distinctId}@example.com`, text: 'héllo ✓' },
    person_distinct_id_version: 0,
    person_version: 1,
    created_at: '2024-03-01T09:00:00.000001Z',
    _inserted_at: '2024-03-01T10:30:00.000000Z',
    is_deleted: false,
    ...overrides,
  };
}

/** A JSONEachRow body cut into 7-byte pieces, so lines (and characters) straddle stream chunks. */
function chunkOf(rows: object[], cursor = 'cursor'): ExportChunk {
  const bytes = Buffer.from(rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += 7) pieces.push(bytes.subarray(offset, offset + 7));
  return { body: Readable.from(pieces), records: rows.length, cursor };
}

function rowsFrom(
  first: number,
  count: number,
  overrides: Partial<ExportedEventRow> = {},
): ExportedEventRow[] {
  return Array.from({ length: count }, (_, offset) => eventRow(first + offset, overrides));
}

describe('Postgres destination', () => {
  let database: TestDatabase;
  let admin: Client;
  let config: Record<string, unknown>;
  const writers: DestinationWriter[] = [];

  function openWriter(overrides: Record<string, unknown> = {}, run = runInfo()): DestinationWriter {
    const writer = factory({ ...config, ...overrides }, run);
    writers.push(writer);
    return writer;
  }

  beforeEach(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    config = {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: database.name,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      schema: 'exports',
      table_name: 'events_export',
      // The machine's server has Debian's self-signed ("snakeoil") certificate.
      has_self_signed_cert: true,
    };
    admin = new Client({ connectionString: database.url });
    await admin.connect();
    await admin.query('CREATE SCHEMA exports');
  });

  afterEach(async () => {
    await Promise.all(writers.splice(0).map((writer) => writer.abort()));
    await admin.end();
    await database.drop();
  });

  async function tableRows(): Promise<Record<string, unknown>[]> {
    const result = await admin.query<Record<string, unknown>>(
      'SELECT * FROM exports.events_export ORDER BY uuid',
    );
    return result.rows;
  }

  it("creates PostHog's events table with a unique index on uuid, over TLS, and writes two chunks", async () => {
    const run = runInfo();
    const writer = openWriter({}, run);
    expect(writer.format).toBe('JSONEachRow');
    expect(writer.resumable).toBe(true);

    const firstRows = rowsFrom(1, 3);
    const result = await writer.write(chunkOf(firstRows, 'c1'), new AbortController().signal);
    expect(result.bytes).toBe(Buffer.byteLength(firstRows.map((row) => JSON.stringify(row) + '\n').join('')));
    await writer.write(chunkOf(rowsFrom(4, 2), 'c2'), new AbortController().signal);

    const tls = await admin.query<{ ssl: boolean }>(
      `SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.application_name = $1`,
      [`hogbase batch export ${run.runId}`],
    );
    expect(tls.rows).toEqual([{ ssl: true }]);
    await writer.finish(new AbortController().signal);

    const columns = await admin.query<{
      column_name: string;
      data_type: string;
      character_maximum_length: number;
    }>(
      `SELECT column_name, data_type, character_maximum_length FROM information_schema.columns
       WHERE table_schema = 'exports' AND table_name = 'events_export' ORDER BY ordinal_position`,
    );
    expect(
      columns.rows.map((column) => [column.column_name, column.data_type, column.character_maximum_length]),
    ).toEqual([
      ['uuid', 'character varying', 200],
      ['event', 'character varying', 200],
      ['properties', 'jsonb', null],
      ['elements', 'jsonb', null],
      ['set', 'jsonb', null],
      ['set_once', 'jsonb', null],
      ['distinct_id', 'character varying', 200],
      ['team_id', 'integer', null],
      ['ip', 'character varying', 200],
      ['site_url', 'character varying', 200],
      ['timestamp', 'timestamp with time zone', null],
    ]);
    const indexes = await admin.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE schemaname = 'exports' AND tablename = 'events_export'`,
    );
    expect(indexes.rows.map((index) => index.indexdef)).toEqual([
      expect.stringMatching(/^CREATE UNIQUE INDEX \S+ ON exports\.events_export USING btree \(uuid\)$/),
    ]);

    const rows = await tableRows();
    expect(rows).toHaveLength(5);
    const expected = eventRow(1);
    expect(rows[0]).toEqual({
      uuid: expected.uuid,
      event: '$autocapture',
      properties: expected.properties,
      // PostHog's toJSONString(toJSONString(elements_chain)).
      elements: JSON.stringify('a:nth-child="1"'),
      set: { email: 'user1@example.com' },
      set_once: null,
      distinct_id: 'user-1',
      team_id: 7,
      ip: '203.0.113.9',
      site_url: '',
      timestamp: new Date('2024-03-01T10:01:00.123Z'),
    });
  });

  it('leaves one row per event when a chunk is written again, with the values of the last write', async () => {
    const writer = openWriter();
    await writer.write(chunkOf(rowsFrom(1, 4)), new AbortController().signal);
    await writer.write(chunkOf(rowsFrom(3, 4)), new AbortController().signal);
    await writer.finish(new AbortController().signal);

    // A retried run: a new writer writes the same chunk with changed values.
    const retry = openWriter();
    const changed = rowsFrom(1, 4, { event: 'renamed', properties: { n: 'again' }, set: null });
    await retry.write(chunkOf(changed), new AbortController().signal);
    await retry.finish(new AbortController().signal);

    const rows = await tableRows();
    expect(rows.map((row) => row.uuid)).toEqual(rowsFrom(1, 6).map((row) => row.uuid));
    expect(rows.slice(0, 4).map((row) => [row.event, row.properties, row.set, row.ip])).toEqual(
      Array(4).fill(['renamed', { n: 'again' }, null, null]),
    );
    expect(rows.slice(4).map((row) => row.event)).toEqual(['$autocapture', '$pageview']);
  });

  it('adds the unique index to an existing table that lacks it, and keeps its rows', async () => {
    await admin.query(
      `CREATE TABLE exports.events_export (uuid VARCHAR(200), event VARCHAR(200), properties JSONB,
       elements JSONB, set JSONB, set_once JSONB, distinct_id VARCHAR(200), team_id INTEGER,
       ip VARCHAR(200), site_url VARCHAR(200), timestamp TIMESTAMP WITH TIME ZONE)`,
    );
    await admin.query(`INSERT INTO exports.events_export (uuid, event) VALUES ('older', 'kept')`);
    const writer = openWriter();
    await writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);
    await writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);
    expect((await tableRows()).map((row) => row.uuid)).toEqual([
      ...rowsFrom(1, 2).map((row) => row.uuid),
      'older',
    ]);
  });

  it('fails without retry, naming the missing index, when an existing table holds duplicate uuids', async () => {
    await admin.query(`CREATE TABLE exports.events_export (uuid VARCHAR(200), event VARCHAR(200))`);
    await admin.query(`INSERT INTO exports.events_export VALUES ('same', 'a'), ('same', 'b')`);
    const failure = openWriter().write(chunkOf(rowsFrom(1, 1)), new AbortController().signal);
    await expect(failure).rejects.toThrow(NonRetryableExportError);
    await expect(failure).rejects.toThrow(/no unique index on uuid.*several rows with the same uuid/);
  });

  it('fails without retry on a wrong password or an unknown database', async () => {
    const wrongPassword = openWriter({ password: 'not-the-password' });
    const refused = wrongPassword.write(chunkOf(rowsFrom(1, 1)), new AbortController().signal);
    await expect(refused).rejects.toThrow(NonRetryableExportError);
    await expect(refused).rejects.toThrow(/credentials were refused.*28P01/);

    const unknownDatabase = openWriter({ database: 'no_such_test_database' });
    await expect(
      unknownDatabase.write(chunkOf(rowsFrom(1, 1)), new AbortController().signal),
    ).rejects.toThrow(/database does not exist.*3D000/);
  });

  it('fails with a retryable error and writes nothing of a chunk whose connection is killed mid-chunk', async () => {
    const run = runInfo();
    const writer = openWriter({}, run);
    await writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);

    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    async function* slowBody(): AsyncGenerator<Buffer> {
      // 1,500 rows: the writer sends a first INSERT of 1,000 inside the chunk's transaction...
      for (const row of rowsFrom(100, 1_500)) yield Buffer.from(JSON.stringify(row) + '\n');
      // ...then waits here for the rest while the test kills its connection.
      await released;
      for (const row of rowsFrom(1_600, 10)) yield Buffer.from(JSON.stringify(row) + '\n');
    }
    const write = writer.write(
      { body: Readable.from(slowBody()), records: 1_510, cursor: 'killed' },
      new AbortController().signal,
    );

    let pid: number | undefined;
    for (let attempt = 0; attempt < 200 && pid === undefined; attempt += 1) {
      const idle = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND state = 'idle in transaction'`,
        [`hogbase batch export ${run.runId}`],
      );
      pid = idle.rows[0]?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(pid).toBeDefined();
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    release();

    const error = (await write.catch((caught: unknown) => caught)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(NonRetryableExportError);
    expect((await tableRows()).map((row) => row.uuid)).toEqual(rowsFrom(1, 2).map((row) => row.uuid));

    // The runner may go on with the same writer: it reconnects.
    await writer.write(chunkOf(rowsFrom(3, 1)), new AbortController().signal);
    expect(await tableRows()).toHaveLength(3);
  });

  it('stops a chunk on a cancelled run and rolls it back', async () => {
    const writer = openWriter();
    const controller = new AbortController();
    function* body(): Generator<Buffer> {
      // The first 1,000 rows are inserted (uncommitted) before the run is cancelled.
      for (const row of rowsFrom(1, 1_200)) yield Buffer.from(JSON.stringify(row) + '\n');
      controller.abort(new Error('cancelled by user'));
      for (const row of rowsFrom(1_300, 5)) yield Buffer.from(JSON.stringify(row) + '\n');
    }
    await expect(
      writer.write({ body: Readable.from(body()), records: 1_205, cursor: 'x' }, controller.signal),
    ).rejects.toThrow('cancelled by user');
    expect(await tableRows()).toEqual([]);
  });

  it('creates no table for an empty interval', async () => {
    const writer = openWriter();
    await writer.finish(new AbortController().signal);
    const table = await admin.query(`SELECT to_regclass('exports.events_export') AS table`);
    expect(table.rows).toEqual([{ table: null }]);
  });

  describe('persons model', () => {
    const personsRun = (): ExportRunInfo => ({ ...runInfo(), model: 'persons' });
    const personsWriter = (run = personsRun()) => openWriter({ table_name: 'persons_export' }, run);

    async function personsTable(): Promise<Record<string, unknown>[]> {
      const result = await admin.query<Record<string, unknown>>(
        'SELECT * FROM exports.persons_export ORDER BY team_id, distinct_id',
      );
      return result.rows;
    }

    it("creates PostHog's persons table keyed by (team_id, distinct_id) and writes one row per distinct id", async () => {
      const writer = personsWriter();
      await writer.write(chunkOf([personRow('alice'), personRow('bob')]), new AbortController().signal);
      await writer.finish(new AbortController().signal);

      const columns = await admin.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns
         WHERE table_schema = 'exports' AND table_name = 'persons_export' ORDER BY ordinal_position`,
      );
      expect(columns.rows.map((column) => [column.column_name, column.data_type])).toEqual([
        ['team_id', 'integer'],
        ['distinct_id', 'text'],
        ['person_id', 'text'],
        ['properties', 'jsonb'],
        ['person_distinct_id_version', 'bigint'],
        ['person_version', 'bigint'],
        ['created_at', 'timestamp with time zone'],
        ['is_deleted', 'boolean'],
      ]);
      const indexes = await admin.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = 'exports' AND tablename = 'persons_export'`,
      );
      expect(indexes.rows.map((index) => index.indexdef)).toEqual([
        expect.stringMatching(
          /^CREATE UNIQUE INDEX \S+ ON exports\.persons_export USING btree \(team_id, distinct_id\)$/,
        ),
      ]);
      expect(await personsTable()).toEqual([
        {
          team_id: 7,
          distinct_id: 'alice',
          person_id: '0190f000-0000-7000-8000-000000000001',
          properties: { email: 'alice@example.com', text: 'héllo ✓' },
          person_distinct_id_version: '0',
          person_version: '1',
          created_at: new Date('2024-03-01T09:00:00.000Z'),
          is_deleted: false,
        },
        expect.objectContaining({ distinct_id: 'bob' }),
      ]);
    });

    it('keeps the newer row: a retried chunk leaves one row per distinct id, an older one changes nothing', async () => {
      const signal = new AbortController().signal;
      const first = personsWriter();
      await first.write(chunkOf([personRow('alice', { person_version: 3 }), personRow('bob')]), signal);
      // A retry of the same run, and an older run written after a newer one.
      await first.write(chunkOf([personRow('alice', { person_version: 3 })]), signal);
      await first.write(
        chunkOf([personRow('alice', { person_version: 2, properties: { stale: true } })]),
        signal,
      );
      expect(
        (await personsTable()).map((row) => [row.distinct_id, row.person_version, row.properties]),
      ).toEqual([
        ['alice', '3', { email: 'alice@example.com', text: 'héllo ✓' }],
        ['bob', '1', { email: 'bob@example.com', text: 'héllo ✓' }],
      ]);

      // A newer version of the person replaces its row; a merge moves bob to another person whose
      // version is lower, but the mapping's version is newer: it replaces too.
      const later = personsWriter();
      await later.write(
        chunkOf([
          personRow('alice', { person_version: 4, properties: { plan: 'pro' } }),
          personRow('bob', {
            person_id: '0190f000-0000-7000-8000-000000000002',
            person_distinct_id_version: 1,
            person_version: 0,
          }),
        ]),
        signal,
      );
      // The person bob left, at a higher version, no longer owns him.
      await later.write(chunkOf([personRow('bob', { person_version: 9 })]), signal);
      await later.finish(signal);
      expect(
        (await personsTable()).map((row) => [
          row.distinct_id,
          row.person_id,
          row.person_version,
          row.properties,
        ]),
      ).toEqual([
        ['alice', '0190f000-0000-7000-8000-000000000001', '4', { plan: 'pro' }],
        ['bob', '0190f000-0000-7000-8000-000000000002', '0', { email: 'bob@example.com', text: 'héllo ✓' }],
      ]);
    });

    it('writes the columns an existing table has, and adds the unique index it lacks', async () => {
      await admin.query(
        `CREATE TABLE exports.persons_export (team_id INTEGER, distinct_id TEXT, person_id TEXT,
         properties JSONB, person_distinct_id_version INTEGER, person_version INTEGER, created_at TIMESTAMPTZ)`,
      );
      const writer = personsWriter();
      await writer.write(
        chunkOf([personRow('alice'), personRow('alice', { person_version: 2 })]),
        new AbortController().signal,
      );
      expect(await personsTable()).toEqual([
        expect.objectContaining({ distinct_id: 'alice', person_version: 2 }),
      ]);
      const indexes = await admin.query<{ indexdef: string }>(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = 'exports' AND tablename = 'persons_export'`,
      );
      expect(indexes.rows).toHaveLength(1);
    });

    it('refuses rows that are not persons, without retry', async () => {
      const failure = personsWriter().write(chunkOf(rowsFrom(1, 1)), new AbortController().signal);
      await expect(failure).rejects.toThrow(NonRetryableExportError);
      await expect(failure).rejects.toThrow('not an exported person');
    });
  });

  describe('where it connects', () => {
    async function failureOf(writer: DestinationWriter): Promise<Error> {
      writers.push(writer);
      return (await writer
        .write(chunkOf(rowsFrom(1, 1)), new AbortController().signal)
        .catch((error: unknown) => error)) as Error;
    }

    it("refuses the server's loopback by default, in any spelling, without retry", async () => {
      for (const host of ['127.0.0.1', '2130706433', '0x7f.1', 'localhost', '::ffff:127.0.0.1', '0.0.0.0']) {
        const error = await failureOf(createPostgresDestination({ ...config, host }, runInfo()));
        expect(error).toBeInstanceOf(NonRetryableExportError);
        expect(error.message).toBe(`Postgres destination: ${host} ${REFUSED}`);
      }
      const table = await admin.query(`SELECT to_regclass('exports.events_export') AS oid`);
      expect(table.rows).toEqual([{ oid: null }]);
    });

    it('refuses a Unix-socket directory as host, even where loopback is allowed', async () => {
      for (const host of ['/var/run/postgresql', '/tmp', '@postgres']) {
        const error = await failureOf(factory({ ...config, host }, runInfo()));
        expect(error).toBeInstanceOf(NonRetryableExportError);
        expect(error.message).toBe(
          `Postgres destination: ${JSON.stringify(host)} is not a network host: socket paths are refused`,
        );
      }
    });

    it('connects to the address a host name resolved to once allowed', async () => {
      const writer = factory({ ...config, host: 'localhost' }, runInfo());
      writers.push(writer);
      await writer.write(chunkOf(rowsFrom(1, 2)), new AbortController().signal);
      expect(await tableRows()).toHaveLength(2);
    });
  });

  it('refuses a config without a table name', () => {
    expect(() => factory({ ...config, table_name: '' }, runInfo())).toThrow(NonRetryableExportError);
  });
});
