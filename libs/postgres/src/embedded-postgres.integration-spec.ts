import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import {
  listeningTcpPorts,
  OPEN_UNIX_SOCKET_SCRIPT,
  postgresAcceptsStranger,
  runNodeAsNobody,
} from '@hogbase/test-support';
import {
  findRunningEmbeddedPostgres,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from './embedded-postgres';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const NODE = path.join(REPO_ROOT, 'node_modules', '.bin', 'node');
const LOCK_FILE = 'postgres.lock.json';

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

  it('serves the owner on a socket in a 0700 directory of the data directory, named by a 0600 lock file', async () => {
    const dataDir = path.join(root, 'data');

    embedded = await startEmbeddedPostgres(dataDir);

    expect(await currentUser(embedded.url)).toBe('postgres');
    expect(embedded.socketDir).toBe(path.join(dataDir, 'postgres-socket'));
    expect((await stat(embedded.socketDir)).mode & 0o777).toBe(0o700);
    const lockPath = path.join(dataDir, LOCK_FILE);
    expect((await stat(lockPath)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(lockPath, 'utf8'))).toEqual({
      pid: process.pid,
      socketDir: embedded.socketDir,
    });
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
    expect(JSON.parse(await readFile(path.join(dataDir, LOCK_FILE), 'utf8'))).toEqual({
      pid: process.pid,
      socketDir,
    });
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
        `require('./libs/postgres/src/embedded-postgres.ts').startEmbeddedPostgres(process.argv[1]).then(() => console.log('ready'))`,
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
      await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow('already served by another process');
    } finally {
      server.kill('SIGKILL');
      await exited;
    }

    // SIGKILL left the lock and the socket file behind.
    expect(await findRunningEmbeddedPostgres(dataDir)).toBeUndefined();
    embedded = await startEmbeddedPostgres(dataDir);
    expect(await currentUser(embedded.url)).toBe('postgres');
  });
});
