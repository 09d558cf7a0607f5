import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import { connect as connectSocket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { eventually, withDeadline } from '@hogbase/test-support';
import { findRunningEmbeddedPostgres } from './embedded-postgres.server';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const NODE = path.join(REPO_ROOT, 'node_modules', '.bin', 'node');
const execFileAsync = promisify(execFile);
/** Mounting the small filesystem the data directory fills takes root. */
const describeAsRoot = process.getuid?.() === 0 ? describe : describe.skip;
/** Each statement's bound: a PGlite that stopped answering must fail the test, not hang it. */
const ANSWER_MS = 10_000;
/** 1 MB of WAL per statement: a new 16 MB WAL segment is needed within a few dozen. */
const EMIT_WAL = `SELECT pg_logical_emit_message(true, 'filler', repeat('x', 1000000))`;

/** Fills the filesystem of `mountPoint` to its last block with one file, whose path it returns. */
function fill(mountPoint: string): string {
  const filler = path.join(mountPoint, 'filler');
  // dd stops (and exits 1) at ENOSPC: that is the point.
  spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' });
  return filler;
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined);
  await withDeadline(client.connect(), 'connect', ANSWER_MS);
  return client;
}

/** The paths under `dir` that process `pid` holds open more than once. */
async function filesOpenTwice(pid: number, dir: string): Promise<string[]> {
  const fdDir = `/proc/${pid}/fd`;
  const targets = await Promise.all(
    (await readdir(fdDir)).map((fd) => readlink(path.join(fdDir, fd)).catch(() => '')),
  );
  const under = targets.filter((target) => target.startsWith(`${dir}/`));
  return [...new Set(under.filter((target, index) => under.indexOf(target) !== index))];
}

/** An embedded Postgres in a process of its own, as npm start serves it. */
interface ServerProcess {
  url: string;
  pid: number;
  /** What it printed (its log lines), stdout and stderr. */
  output: () => string;
  kill: () => Promise<void>;
}

/**
 * Starts the embedded Postgres on `dataDir` in a child process: a PGlite that hangs (a spinning
 * WASM runtime holds the event loop) fails the test on its deadlines instead of hanging it.
 */
async function startServerProcess(dataDir: string): Promise<ServerProcess> {
  const child = spawn(
    NODE,
    [
      '-r',
      '@swc-node/register',
      '-e',
      `require('./libs/postgres/src/embedded-postgres.server.ts').startEmbeddedPostgres(process.argv[1]).then(() => console.log('ready'))`,
      dataDir,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const kill = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  try {
    await eventually('the embedded Postgres to start', () => output.includes('ready'), {
      timeoutMs: 120_000,
    });
    return {
      url: (await findRunningEmbeddedPostgres(dataDir))!,
      pid: child.pid!,
      output: () => output,
      kill,
    };
  } catch (error) {
    await kill();
    throw error;
  }
}

/** The Unix socket an embedded Postgres URL names (`?host=<dir>`, node-postgres's convention). */
function socketPathOf(url: string): string {
  const parsed = new URL(url);
  return path.join(parsed.searchParams.get('host') ?? '', `.s.PGSQL.${parsed.port}`);
}

/** A frontend message: type byte, then its length (itself included), then the body. */
function frontendMessage(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

describe('embedded Postgres: a message type Postgres does not take', () => {
  let root: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'hogbase-embedded-message-test-'));
    server = await startServerProcess(path.join(root, 'data'));
  });

  afterAll(async () => {
    await server?.kill();
    await rm(root, { recursive: true, force: true });
  });

  it('ends that connection with FATAL 08P01 and goes on serving the others', async () => {
    const { url } = server!;
    const socket = connectSocket({ path: socketPathOf(url) });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const parameters = Buffer.from('user\0postgres\0database\0postgres\0\0');
    const startup = Buffer.alloc(8);
    startup.writeInt32BE(8 + parameters.length, 0);
    startup.writeInt32BE(196608, 4);
    socket.write(Buffer.concat([startup, parameters]));
    await eventually('the start-up answer', () => received.includes('Z\0\0\0\x05I', 0, 'latin1'), {
      timeoutMs: ANSWER_MS,
    });
    received = Buffer.alloc(0);

    // A password message outside authentication: Postgres ends the session with FATAL, and in
    // PGlite that exit never returned.
    socket.write(frontendMessage('p', Buffer.from('secret\0')));
    await withDeadline(closed, 'the connection to be closed', ANSWER_MS);

    expect(received.toString('latin1')).toContain('C08P01\0Minvalid frontend message type 112\0');
    const other = await connect(url);
    expect((await withDeadline(other.query('SELECT 1 AS one'), 'SELECT', ANSWER_MS)).rows).toEqual([
      { one: 1 },
    ]);
    await other.end();
  });
});

describeAsRoot('embedded Postgres: PGlite PANICs on a full disk', () => {
  let root: string;
  let mountPoint: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'hogbase-embedded-recovery-test-'));
    mountPoint = path.join(root, 'fs');
    await mkdir(mountPoint);
    // Room for initdb (about 41 MiB) and the WAL, and little else.
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', 'size=160m', 'tmpfs', mountPoint]);
  });

  afterAll(async () => {
    await server?.kill();
    if (mountPoint) await execFileAsync('umount', ['--lazy', mountPoint]).catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('ends its connections, refuses new ones while the disk is full, and once space is freed answers again with every committed row', async () => {
    const dataDir = path.join(mountPoint, 'data');
    server = await startServerProcess(dataDir);
    const { url, pid, output } = server;

    const writer = await connect(url);
    await writer.query(`CREATE TABLE items (id integer PRIMARY KEY, phase text NOT NULL)`);
    await writer.query(`INSERT INTO items SELECT n, 'before' FROM generate_series(1, 100) AS n`);
    const bystander = await connect(url);
    const bystanderErrors: unknown[] = [];
    bystander.on('error', (error) => bystanderErrors.push(error));

    const filler = fill(mountPoint);
    // Each transaction's row fits on the table's last page, so it commits on the full disk,
    // until the WAL needs a new segment: the PANIC ends the transaction in flight.
    const acknowledged: number[] = [];
    let panic: unknown;
    for (let id = 1000; id < 1100 && !panic; id += 1) {
      try {
        await withDeadline(writer.query('BEGIN'), 'BEGIN', ANSWER_MS);
        await withDeadline(writer.query(`INSERT INTO items VALUES ($1, 'full')`, [id]), 'INSERT', ANSWER_MS);
        await withDeadline(writer.query(EMIT_WAL), 'WAL', ANSWER_MS);
        const commit = await withDeadline(writer.query('COMMIT'), 'COMMIT', ANSWER_MS);
        if (commit.command === 'COMMIT') acknowledged.push(id);
      } catch (error) {
        if ((error as { severity?: string }).severity === 'PANIC') panic = error;
        else if ((error as { code?: string }).code === '53100') await writer.query('ROLLBACK');
        else throw error;
      }
    }
    expect(panic).toMatchObject({ severity: 'PANIC', code: '53100' });
    expect(acknowledged.length).toBeGreaterThan(0);

    // Every connection was ended as a crashed server ends them; new ones are refused while full.
    await eventually('the idle connection to be ended', () => bystanderErrors.length > 0, {
      timeoutMs: ANSWER_MS,
    });
    expect(bystanderErrors[0]).toMatchObject({ severity: 'FATAL', code: '57P02' });
    await expect(connect(url)).rejects.toMatchObject({ severity: 'FATAL', code: '57P03' });
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // A few attempts to reopen.
    await expect(connect(url)).rejects.toMatchObject({ code: '57P03' });

    await rm(filler);
    const reader = await eventually(
      'a connection once space was freed',
      () => connect(url).catch(() => undefined),
      { timeoutMs: 60_000 },
    );
    const { rows } = await withDeadline(
      reader.query<{ id: number; phase: string }>('SELECT id, phase FROM items ORDER BY id'),
      'SELECT',
      ANSWER_MS,
    );
    await reader.end();
    // Every committed row, and nothing of the transaction the PANIC cut off.
    expect(rows.filter((row) => row.phase === 'before')).toHaveLength(100);
    expect(rows.filter((row) => row.phase === 'full').map((row) => row.id)).toEqual(acknowledged);
    // The failed PGlite's files were released: none is open twice beside the new one's.
    expect(await filesOpenTwice(pid, dataDir)).toEqual([]);
    const logged = (message: string) =>
      output()
        .split('\n')
        .filter((line) => line.includes(message)).length;
    expect({
      failed: logged('the embedded Postgres failed'),
      waiting: logged('cannot be reopened yet'),
      reopened: logged('was reopened and takes connections again'),
    }).toEqual({ failed: 1, waiting: 1, reopened: 1 });
  }, 300_000);
});
