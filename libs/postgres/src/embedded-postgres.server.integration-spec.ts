import { execFile, spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import {
  listeningTcpPorts,
  OPEN_UNIX_SOCKET_SCRIPT,
  postgresAcceptsStranger,
  runNodeAsNobody,
} from '@hogbase/test-support';
import { dataDirHolder, DataDirInUseError, lockDataDir } from './data-dir-lock.util';
import {
  EmbeddedPostgresOpenError,
  findRunningEmbeddedPostgres,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from './embedded-postgres.server';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const NODE = path.join(REPO_ROOT, 'node_modules', '.bin', 'node');
const LOCK_KEY_FILE = 'process-lock.key';
const execFileAsync = promisify(execFile);

async function currentUser(url: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ current_user: string }>('SELECT current_user')).rows[0].current_user;
  } finally {
    await client.end();
  }
}

/** The Unix socket an embedded Postgres URL names (`?host=<dir>`, node-postgres's convention). */
function socketPathOf(url: string): string {
  const parsed = new URL(url);
  return path.join(parsed.searchParams.get('host') ?? '', `.s.PGSQL.${parsed.port}`);
}

/** As the OS user `nobody`: stats `reachable` (it must be able to), then opens the socket. */
const STRANGER_SCRIPT = `
require('node:fs').statSync(process.argv[2]);
${OPEN_UNIX_SOCKET_SCRIPT}`;

describe('embedded Postgres: only the owner of the data directory gets in', () => {
  let root: string;
  let embedded: EmbeddedPostgres | undefined;

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'hogbase-embedded-pg-test-'));
  });

  afterEach(async () => {
    await embedded?.stop();
    embedded = undefined;
    await rm(root, { recursive: true, force: true });
  });

  it('serves the owner on a socket in a 0700 directory of the data directory, which its lock tells', async () => {
    const dataDir = path.join(root, 'data');

    embedded = await startEmbeddedPostgres(dataDir);

    expect(await currentUser(embedded.url)).toBe('postgres');
    expect(embedded.socketDir).toBe(path.join(dataDir, 'postgres-socket'));
    expect((await stat(embedded.socketDir)).mode & 0o777).toBe(0o700);
    expect(await dataDirHolder(dataDir)).toEqual({
      pid: process.pid,
      ports: {},
      postgresSocketDir: embedded.socketDir,
    });
    expect(await findRunningEmbeddedPostgres(dataDir)).toBe(embedded.url);
    // The lock's name is made from this key: only who can read the data directory can name it.
    expect((await stat(path.join(dataDir, LOCK_KEY_FILE))).mode & 0o777).toBe(0o600);
  });

  it('opens no TCP port, so a client naming another user and a wrong password has nowhere to connect', async () => {
    const before = await listeningTcpPorts(process.pid);

    embedded = await startEmbeddedPostgres(path.join(root, 'data'));

    const opened = (await listeningTcpPorts(process.pid)).filter((port) => !before.includes(port));
    const accepting: number[] = [];
    for (const port of opened) if (await postgresAcceptsStranger(port)) accepting.push(port);
    expect({ opened, accepting }).toEqual({ opened: [], accepting: [] });
  });

  const asRoot = process.getuid?.() === 0 ? it : it.skip;
  asRoot(
    'refuses another OS user (nobody) on its socket, although that user can reach the data directory',
    async () => {
      // A world-readable data directory, as an older version left it: only the socket's own
      // directory stands between another user and the database.
      await chmod(root, 0o755);
      const dataDir = path.join(root, 'data');
      await mkdir(dataDir, { mode: 0o755 });
      await chmod(dataDir, 0o755);
      embedded = await startEmbeddedPostgres(dataDir);

      const stranger = await runNodeAsNobody(STRANGER_SCRIPT, [socketPathOf(embedded.url), dataDir]);

      expect(stranger.stderr).toBe('');
      expect(JSON.parse(stranger.stdout)).toEqual({ connected: false, code: 'EACCES' });
      expect(await currentUser(embedded.url)).toBe('postgres');
    },
  );

  it('puts the socket in a 0700 temp directory when the data directory is too long for a socket path, and removes it on stop', async () => {
    const dataDir = path.join(root, 'd'.repeat(100));

    embedded = await startEmbeddedPostgres(dataDir);

    const { socketDir } = embedded;
    expect(path.dirname(socketDir)).toBe(tmpdir());
    expect((await stat(socketDir)).mode & 0o777).toBe(0o700);
    expect(await findRunningEmbeddedPostgres(dataDir)).toBe(embedded.url);
    expect(await currentUser(embedded.url)).toBe('postgres');

    await embedded.stop();
    embedded = undefined;
    await expect(stat(socketDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('lets another process of the owner find the running server, and takes over once it was killed', async () => {
    const dataDir = path.join(root, 'data');
    const server = spawn(
      NODE,
      [
        '-r',
        '@swc-node/register',
        '-e',
        `require('./libs/postgres/src/embedded-postgres.server.ts').startEmbeddedPostgres(process.argv[1]).then(() => console.log('ready'))`,
        dataDir,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => server.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        server.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
        server.once('exit', (code) => reject(new Error(`the server process exited with ${String(code)}`)));
      });

      const url = await findRunningEmbeddedPostgres(dataDir);

      expect(url).toBeDefined();
      expect(await currentUser(url!)).toBe('postgres');
      await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(
        `${dataDir} is in use by another process (pid ${server.pid})`,
      );
      // The refused start left the server's socket alone.
      expect(await currentUser(url!)).toBe('postgres');
    } finally {
      server.kill('SIGKILL');
      await exited;
    }

    // SIGKILL left the socket file behind, but no lock: the kernel let go of it with the process.
    expect(await findRunningEmbeddedPostgres(dataDir)).toBeUndefined();
    embedded = await startEmbeddedPostgres(dataDir);
    expect(await currentUser(embedded.url)).toBe('postgres');
  });

  it('refuses a data directory whose lock another process holds while it is still starting, and touches nothing there', async () => {
    const dataDir = path.join(root, 'data');
    await mkdir(dataDir);
    // A process that holds the lock and has not started its Postgres yet (PGlite's initdb takes seconds).
    const holder = spawn(
      NODE,
      [
        '-r',
        '@swc-node/register',
        '-e',
        `require('./libs/postgres/src/data-dir-lock.util.ts').lockDataDir(process.argv[1]).then(() => { console.log('locked'); setInterval(() => undefined, 1000); })`,
        dataDir,
      ],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve());
        holder.once('exit', (code) => reject(new Error(`the holder exited with ${String(code)}`)));
      });
      const before = (await readdir(dataDir)).sort();

      const refused = await startEmbeddedPostgres(dataDir).catch((error: unknown) => error);

      expect(refused).toBeInstanceOf(DataDirInUseError);
      expect((refused as DataDirInUseError).holder).toEqual({ pid: holder.pid, ports: {} });
      expect(await findRunningEmbeddedPostgres(dataDir)).toBeUndefined();
      expect((await readdir(dataDir)).sort()).toEqual(before);
    } finally {
      holder.kill('SIGKILL');
      await exited;
    }
    const lock = await lockDataDir(dataDir);
    await lock.release();
  });

  const asRootOnly = process.getuid?.() === 0 ? it : it.skip;
  asRootOnly('names the directory and its full filesystem when PGlite cannot open its files', async () => {
    // A filesystem too small for initdb (about 41 MiB).
    const small = path.join(root, 'small');
    await mkdir(small);
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', small]);
    try {
      const failure = await startEmbeddedPostgres(path.join(small, 'data')).catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(EmbeddedPostgresOpenError);
      expect((failure as Error).message).toMatch(
        new RegExp(
          `^the embedded Postgres could not open ${small}/data/postgres: its filesystem (is full|has [\\d.]+ MiB free)`,
        ),
      );
      // The lock went with the failed start.
      expect(await dataDirHolder(path.join(small, 'data'))).toBeUndefined();
    } finally {
      // Lazily: the PGlite that failed keeps its files open until this process ends.
      await execFileAsync('umount', ['--lazy', small]);
    }
  });
});
