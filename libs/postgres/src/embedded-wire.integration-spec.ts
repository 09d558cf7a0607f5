import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect as connectSocket } from 'node:net';
import { Client, Pool, type Notification } from 'pg';
import { eventuallyPasses } from '@hogbase/test-support';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.server';

/** The Unix socket an embedded Postgres URL names (`?host=<dir>`, node-postgres's convention). */
function socketPathOf(url: string): string {
  const parsed = new URL(url);
  return path.join(parsed.searchParams.get('host') ?? '', `.s.PGSQL.${parsed.port}`);
}

/**
 * An embedded Postgres for the describe block that calls this, with an `items` table. `connect`
 * opens a client through the socket or in process; every client it opened is ended after each test.
 */
function embeddedForSuite(tempPrefix: string, maxConnections: number) {
  let root: string;
  const clients: Client[] = [];
  const suite = {
    embedded: undefined as unknown as EmbeddedPostgres,
    async connect(via: 'socket' | 'in-process' = 'socket'): Promise<Client> {
      const client = new Client({
        connectionString: suite.embedded.url,
        ...(via === 'in-process' ? { stream: suite.embedded.connectInProcess } : {}),
      });
      client.on('error', () => undefined);
      await client.connect();
      clients.push(client);
      return client;
    },
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), tempPrefix));
    suite.embedded = await startEmbeddedPostgres(root, { maxConnections });
    const setup = await suite.connect();
    await setup.query(`CREATE TABLE items (id serial PRIMARY KEY, owner text NOT NULL, n integer NOT NULL)`);
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.end().catch(() => undefined)));
  });

  afterAll(async () => {
    await suite.embedded.stop();
    await rm(root, { recursive: true, force: true });
  });
  return suite;
}

describe('embedded Postgres: many connections on one PGlite session', () => {
  const suite = embeddedForSuite('hogbase-embedded-wire-test-', 12);
  const connect = () => suite.connect();

  beforeAll(async () => {
    const setup = await connect();
    await setup.query(`
      CREATE FUNCTION notify_item() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_notify('items_changed', NEW.owner); RETURN NULL; END $$`);
    await setup.query(
      `CREATE TRIGGER items_notify AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION notify_item()`,
    );
  });

  it('keeps each connection’s parameterized queries whole when many run at once', async () => {
    const pool = new Pool({ connectionString: suite.embedded.url, max: 8 });
    try {
      // Different statements with different parameter types, all on the unnamed statement: an
      // interleaved Parse of one connection between another's Parse and Bind fails or answers wrongly.
      const answers = await Promise.all(
        Array.from({ length: 400 }, (_, index) =>
          index % 2 === 0
            ? pool
                .query<{ value: number }>('SELECT $1::int * 2 AS value', [index])
                .then(({ rows }) => rows[0].value)
            : pool
                .query<{ value: string }>("SELECT $1::text || '-' || $2::text AS value", [`a${index}`, 'b'])
                .then(({ rows }) => rows[0].value),
        ),
      );
      answers.forEach((answer, index) => {
        expect(answer).toEqual(index % 2 === 0 ? index * 2 : `a${index}-b`);
      });
    } finally {
      await pool.end();
    }
  });

  it('gives each connection its own named statements, and deallocates them when it closes', async () => {
    const [first, second] = await Promise.all([connect(), connect()]);
    for (let round = 0; round < 3; round += 1) {
      const [one, two] = await Promise.all([
        first.query<{ value: string }>({
          name: 'same-name',
          text: "SELECT 'first:' || $1 AS value",
          values: [round],
        }),
        second.query<{ value: number }>({
          name: 'same-name',
          text: 'SELECT $1::int + 100 AS value',
          values: [round],
        }),
      ]);
      expect(one.rows[0].value).toBe(`first:${round}`);
      expect(two.rows[0].value).toBe(round + 100);
    }
    const observer = await connect();
    const prepared = async () =>
      (await observer.query<{ count: string }>('SELECT count(*) FROM pg_prepared_statements')).rows[0].count;
    expect(await prepared()).toBe('2');
    await first.end();
    await second.end();
    for (let attempt = 0; attempt < 50 && (await prepared()) !== '0'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await prepared()).toBe('0');
  });

  it("keeps an open transaction to its connection: another's statements wait for its end, and a dropped one is rolled back", async () => {
    const [writer, reader] = await Promise.all([connect(), connect()]);
    await writer.query('BEGIN');
    await writer.query(`INSERT INTO items (owner, n) VALUES ('tx', 1)`);
    let read: number | undefined;
    const waiting = reader
      .query<{ count: string }>(`SELECT count(*) FROM items WHERE owner = 'tx'`)
      .then(({ rows }) => (read = Number(rows[0].count)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The session is the writer's until it commits: the reader has not run yet.
    expect(read).toBeUndefined();
    await writer.query(`INSERT INTO items (owner, n) VALUES ('tx', 2)`);
    await writer.query('COMMIT');
    await waiting;
    expect(read).toBe(2);

    const dropped = await connect();
    await dropped.query('BEGIN');
    await dropped.query(`INSERT INTO items (owner, n) VALUES ('dropped', 1)`);
    // The socket goes away without COMMIT or ROLLBACK.
    dropped.on('error', () => undefined);
    (dropped as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const { rows } = await reader.query<{ count: string }>(
      `SELECT count(*) FROM items WHERE owner = 'dropped'`,
    );
    expect(rows[0].count).toBe('0');
    expect((await reader.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('rolls back a transaction whose connection went away while its statement ran, and serves the others', async () => {
    // A raw client: startup, then BEGIN and an INSERT in one simple query, and gone at once.
    const socket = connectSocket({ path: socketPathOf(suite.embedded.url) });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const parameters = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + parameters.length, 0);
    startup.writeInt32BE(196608, 4);
    socket.write(Buffer.concat([startup, parameters]));
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    // The sleep holds the session (PGlite runs it synchronously) while the socket closes.
    const sql = Buffer.from(
      "BEGIN; INSERT INTO items (owner, n) VALUES ('vanished', 1); SELECT pg_sleep(0.3);\0",
    );
    const query = Buffer.alloc(5);
    query.write('Q', 0, 'latin1');
    query.writeInt32BE(4 + sql.length, 1);
    socket.end(Buffer.concat([query, sql]));

    const reader = await connect();
    const { rows } = await reader.query<{ count: string }>(
      `SELECT count(*) FROM items WHERE owner = 'vanished'`,
    );
    expect(rows[0].count).toBe('0');
  });

  it('delivers NOTIFY to the connections that LISTEN, whichever connection committed it', async () => {
    const [listener, other, writer] = await Promise.all([connect(), connect(), connect()]);
    const heard: Notification[] = [];
    const otherHeard: Notification[] = [];
    listener.on('notification', (notification) => heard.push(notification));
    other.on('notification', (notification) => otherHeard.push(notification));
    await listener.query('LISTEN items_changed');

    await writer.query(`INSERT INTO items (owner, n) VALUES ('from-trigger', 1)`);
    await writer.query(`NOTIFY items_changed, 'direct'`);
    await writer.query('BEGIN');
    await writer.query(`SELECT pg_notify('items_changed', 'in-a-transaction')`);
    await writer.query('COMMIT');
    await eventuallyPasses(
      () =>
        expect(heard.map((notification) => notification.payload)).toEqual([
          'from-trigger',
          'direct',
          'in-a-transaction',
        ]),
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    expect(heard[0].channel).toBe('items_changed');
    expect(otherHeard).toEqual([]);

    await listener.query('UNLISTEN items_changed');
    await writer.query(`NOTIFY items_changed, 'after-unlisten'`);
    await writer.query('SELECT 1');
    expect(heard).toHaveLength(3);
  });

  it('refuses a connection beyond its limit as Postgres does', async () => {
    // The earlier tests' connections may still be closing on the server side: count what gets in.
    let admitted = 0;
    let refusal: unknown;
    for (let attempt = 0; attempt < 20 && !refusal; attempt += 1) {
      await connect().then(
        () => (admitted += 1),
        (failure: unknown) => (refusal = failure),
      );
    }
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(12);
    expect(refusal).toEqual(expect.objectContaining({ message: 'sorry, too many clients already' }));
  });

  it('stops while clients are connected, mid-transaction with statements prepared, without an error', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hogbase-embedded-wire-stop-'));
    const own = await startEmbeddedPostgres(dir, { maxConnections: 4 });
    try {
      const client = new Client({ connectionString: own.url });
      client.on('error', () => undefined);
      await client.connect();
      await client.query({ name: 'prepared', text: 'SELECT $1::int AS one', values: [1] });
      await client.query('BEGIN');
      await expect(own.stop()).resolves.toBeUndefined();
      await expect(client.query('SELECT 1')).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('embedded Postgres: connections from the same process without the socket', () => {
  const suite = embeddedForSuite('hogbase-embedded-in-process-test-', 8);
  const connect = (via: 'socket' | 'in-process' = 'in-process') => suite.connect(via);

  it('answers parameterized queries beside socket connections, each connection its own', async () => {
    const inProcess = new Pool({
      connectionString: suite.embedded.url,
      max: 2,
      stream: suite.embedded.connectInProcess,
    });
    const socket = new Pool({ connectionString: suite.embedded.url, max: 2 });
    try {
      const answers = await Promise.all(
        Array.from({ length: 200 }, (_, index) =>
          (index % 2 === 0 ? inProcess : socket)
            .query<{ value: string }>({
              // A named statement on both kinds: each connection gets its own.
              name: 'echo',
              text: "SELECT $1::text || '-' || $2::int AS value",
              values: [`v${index}`, index],
            })
            .then(({ rows }) => rows[0].value),
        ),
      );
      answers.forEach((answer, index) => expect(answer).toBe(`v${index}-${index}`));
    } finally {
      await Promise.all([inProcess.end(), socket.end()]);
    }
  });

  it("runs a transaction's statements back to back, without a turn of the event loop between them", async () => {
    const client = await connect();
    let turned = false;
    setImmediate(() => (turned = true));
    await client.query('BEGIN');
    for (let n = 0; n < 5; n += 1) {
      await client.query('INSERT INTO items (owner, n) VALUES ($1, $2)', ['back-to-back', n]);
    }
    await client.query('COMMIT');
    expect(turned).toBe(false);
    const { rows } = await client.query<{ count: string }>(
      `SELECT count(*) FROM items WHERE owner = 'back-to-back'`,
    );
    expect(rows[0].count).toBe('5');
  });

  it("keeps its transaction from the socket's connections, and a dropped one is rolled back", async () => {
    const [writer, reader] = await Promise.all([connect(), connect('socket')]);
    await writer.query('BEGIN');
    await writer.query(`INSERT INTO items (owner, n) VALUES ('tx', 1)`);
    let read: string | undefined;
    const waiting = reader
      .query<{ count: string }>(`SELECT count(*) FROM items WHERE owner = 'tx'`)
      .then(({ rows }) => (read = rows[0].count));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(read).toBeUndefined();
    await writer.query('COMMIT');
    await waiting;
    expect(read).toBe('1');

    const dropped = await connect();
    await dropped.query('BEGIN');
    await dropped.query(`INSERT INTO items (owner, n) VALUES ('dropped', 1)`);
    (dropped as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const { rows } = await reader.query<{ count: string }>(
      `SELECT count(*) FROM items WHERE owner = 'dropped'`,
    );
    expect(rows[0].count).toBe('0');
  });

  it('counts toward the connection limit, frees its place when it ends, and is refused once the server stopped', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hogbase-embedded-in-process-limit-'));
    const own = await startEmbeddedPostgres(dir, { maxConnections: 2 });
    const connectOwn = async () => {
      const client = new Client({ connectionString: own.url, stream: own.connectInProcess });
      client.on('error', () => undefined);
      await client.connect();
      return client;
    };
    try {
      const [first, second] = [await connectOwn(), await connectOwn()];
      await expect(connectOwn()).rejects.toThrow('sorry, too many clients already');

      await first.end();
      const third = await connectOwn();
      expect((await third.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);

      await second.query('BEGIN');
      await own.stop();
      await expect(second.query('SELECT 1')).rejects.toThrow();
      await expect(connectOwn()).rejects.toThrow('the embedded Postgres has stopped');
    } finally {
      await own.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
