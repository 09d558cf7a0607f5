import { chmod, lstat, mkdtemp, opendir, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findRunningEmbeddedPostgres } from '@hogbase/postgres';
import {
  listeningTcpPorts,
  OPEN_UNIX_SOCKET_SCRIPT,
  postgresAcceptsStranger,
  runNodeAsNobody,
  runProcess,
} from '@hogbase/test-support';
import {
  freePort,
  killApps,
  readInitialCredentials,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  standaloneEnv,
  startApp,
  STOP_TIMEOUT_MS,
  stopApp,
  waitForReady,
  type AppProcess,
} from './app-process';

const CLI_TIMEOUT_MS = 60_000;

/** Every entry of `root` (itself included) whose mode grants anything beyond its owner. */
async function entriesOpenToOthers(root: string): Promise<string[]> {
  const open: string[] = [];
  const visit = async (entryPath: string): Promise<void> => {
    // chDB may remove a temporary file between the listing and the lstat while the server runs.
    const stats = await lstat(entryPath).catch(() => undefined);
    if (!stats || stats.isSymbolicLink()) return;
    const mode = stats.mode & 0o7777;
    const expected = stats.isDirectory() ? 0o700 : stats.isFile() ? 0o600 : mode & 0o700;
    if (mode !== expected) open.push(`${mode.toString(8)} ${path.relative(root, entryPath) || '.'}`);
    if (!stats.isDirectory()) return;
    const directory = await opendir(entryPath).catch(() => undefined);
    if (directory) for await (const entry of directory) await visit(path.join(entryPath, entry.name));
  };
  await visit(root);
  return open;
}

/** What an older version left: directories 0755 and files 0644 all the way down. */
async function loosen(root: string): Promise<void> {
  const stats = await lstat(root);
  if (stats.isSymbolicLink()) return;
  await chmod(root, stats.isDirectory() ? 0o755 : 0o644);
  if (stats.isDirectory()) {
    for await (const entry of await opendir(root)) await loosen(path.join(root, entry.name));
  }
}

/**
 * Finding: other local users could read the events under DATA_DIR and log in to the embedded
 * Postgres (any user, any password) on its loopback port. `npm start` now keeps DATA_DIR to its
 * owner and serves Postgres on a socket only the owner can open.
 */
describe('npm start: DATA_DIR and the embedded Postgres are for their owner only', () => {
  let root: string;
  let dataDir: string;
  let port: number;
  let baseUrl: string;
  let server: AppProcess | undefined;
  let restarted: AppProcess | undefined;

  beforeAll(async () => {
    // The parent is open to everyone, as a home directory or /srv often is: only DATA_DIR's own
    // modes may keep others out. DATA_DIR itself does not exist yet.
    root = await mkdtemp(path.join(tmpdir(), 'hogbase-data-dir-security-test-'));
    await chmod(root, 0o755);
    dataDir = path.join(root, 'data');
    port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    server = startApp('standalone', standaloneEnv(dataDir, port));
    await waitForReady(server, baseUrl);
  }, READY_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await killApps(server, restarted);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('creates DATA_DIR 0700, every directory under it 0700 and every file 0600, chDB and Postgres included', async () => {
    const top = await readdir(dataDir);

    expect(top).toEqual(expect.arrayContaining(['clickhouse', 'initial-credentials.json', 'postgres']));
    expect(await entriesOpenToOthers(dataDir)).toEqual([]);
  });

  it('listens on no TCP port where a Postgres client naming another user and a wrong password gets in', async () => {
    const ports = await listeningTcpPorts(server!.child.pid!);
    expect(ports).toContain(port); // The listing sees the process's ports: the management API's at least.

    const accepting: number[] = [];
    for (const candidate of ports) if (await postgresAcceptsStranger(candidate)) accepting.push(candidate);

    expect(accepting).toEqual([]);
  });

  const asRoot = process.getuid?.() === 0 ? it : it.skip;
  asRoot(
    'refuses the embedded Postgres socket to another OS user (nobody), whatever the credentials',
    async () => {
      // The socket the owner's own processes (the admin CLI) find through the lock file.
      const ownerUrl = await findRunningEmbeddedPostgres(dataDir);
      expect(ownerUrl).toBeDefined();
      const parsed = new URL(ownerUrl!);
      const socketPath = path.join(parsed.searchParams.get('host') ?? '', `.s.PGSQL.${parsed.port}`);
      const onSocket = await runNodeAsNobody(OPEN_UNIX_SOCKET_SCRIPT, [socketPath]);
      expect(onSocket.stderr).toBe('');
      expect(JSON.parse(onSocket.stdout)).toEqual({ connected: false, code: 'EACCES' });
    },
    40_000,
  );

  it(
    'serves `npm run admin -- create-key` through the running server, and the key works',
    async () => {
      const credentials = await readInitialCredentials(dataDir);
      const env = standaloneEnv(dataDir, 0);
      delete env.MANAGEMENT_PORT;

      const result = await runProcess(
        'npm',
        ['run', 'admin', '--', 'create-key', '--email', credentials.email, '--scopes', 'organization:read'],
        { cwd: REPO_ROOT, env, timeoutMs: CLI_TIMEOUT_MS - 5_000 },
      );

      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      const { personal_api_key: key } = JSON.parse(result.stdout) as { personal_api_key: string };
      const organizations = await fetch(`${baseUrl}/api/organizations/`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(organizations.status).toBe(200);
      expect(((await organizations.json()) as { results: { id: string }[] }).results[0].id).toBe(
        credentials.organization_id,
      );
      expect(await entriesOpenToOthers(dataDir)).toEqual([]);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'leaves DATA_DIR owner-only at rest after SIGTERM',
    async () => {
      expect(await stopApp(server!)).toEqual({ code: 0, signal: null });

      expect(await entriesOpenToOthers(dataDir)).toEqual([]);
    },
    STOP_TIMEOUT_MS + 5_000,
  );

  it(
    'tightens a DATA_DIR an older version left readable to everyone when it starts on it',
    async () => {
      await loosen(dataDir);
      expect(await entriesOpenToOthers(dataDir)).not.toEqual([]);

      restarted = startApp('standalone', standaloneEnv(dataDir, port));
      await waitForReady(restarted, baseUrl);

      expect(await entriesOpenToOthers(dataDir)).toEqual([]);
      expect(await stopApp(restarted)).toEqual({ code: 0, signal: null });
    },
    READY_TIMEOUT_MS + STOP_TIMEOUT_MS,
  );
});
