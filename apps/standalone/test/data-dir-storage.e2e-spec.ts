import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, READY_TIMEOUT_MS, standaloneEnv, startApp } from './app-process';

const execFileAsync = promisify(execFile);
const isRoot = process.getuid?.() === 0;
/** Mounting a small filesystem takes root: elsewhere those cases are skipped. */
const asRoot = isRoot ? it : it.skip;

/** `npm start` on `dataDir` until it exits by itself: its exit code and what it printed. */
async function startUntilExit(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}) {
  const app = startApp('standalone', { ...standaloneEnv(dataDir, await freePort(), 0), ...extraEnv });
  const { code } = await app.exited;
  return { code, output: app.output().trim() };
}

describe('npm start: a DATA_DIR that cannot take the data stops the start with a one-line message', () => {
  let root: string;
  const mounts: string[] = [];

  /** A tmpfs of `size` at `<root>/<name>`, optionally read-only. */
  async function smallFilesystem(name: string, size: string, readOnly = false): Promise<string> {
    const mountPoint = path.join(root, name);
    await mkdir(mountPoint);
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mountPoint]);
    mounts.push(mountPoint);
    await mkdir(path.join(mountPoint, 'data'), { mode: 0o700 });
    if (readOnly) await execFileAsync('mount', ['-o', 'remount,ro', mountPoint]);
    return mountPoint;
  }

  beforeEach(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'hogbase-data-dir-storage-test-'));
  });

  afterEach(async () => {
    for (const mountPoint of mounts.splice(0)) await execFileAsync('umount', ['--lazy', mountPoint]);
    await rm(root, { recursive: true, force: true });
  });

  asRoot(
    'refuses a DATA_DIR whose filesystem has less than 64 MiB free, naming it',
    async () => {
      const dataDir = path.join(await smallFilesystem('small', '32m'), 'data');

      const { code, output } = await startUntilExit(dataDir);

      expect(code).toBe(1);
      expect(output).toBe(
        `DATA_DIR=${dataDir}: its filesystem has 32 MiB free, and at least 64 MiB are needed`,
      );
    },
    READY_TIMEOUT_MS,
  );

  asRoot(
    'refuses a DATA_DIR on a read-only filesystem, naming it',
    async () => {
      const dataDir = path.join(await smallFilesystem('read-only', '128m', true), 'data');

      const { code, output } = await startUntilExit(dataDir);

      expect(code).toBe(1);
      expect(output).toBe(`DATA_DIR=${dataDir}: its filesystem is read-only`);
    },
    READY_TIMEOUT_MS,
  );

  (isRoot ? it.skip : it)(
    'refuses a DATA_DIR this user may not write, naming it',
    async () => {
      const dataDir = path.join(root, 'data');
      await mkdir(dataDir, { mode: 0o500 });
      await chmod(dataDir, 0o500);

      const { code, output } = await startUntilExit(dataDir);

      expect(code).toBe(1);
      expect(output).toBe(`DATA_DIR=${dataDir}: this user (uid ${process.getuid?.()}) may not write there`);
    },
    READY_TIMEOUT_MS,
  );

  asRoot(
    'refuses a CLICKHOUSE_DATA_PATH outside DATA_DIR whose filesystem is nearly full, naming it',
    async () => {
      const dataDir = path.join(root, 'data');
      const clickhousePath = path.join(await smallFilesystem('clickhouse', '16m'), 'data');

      const { code, output } = await startUntilExit(dataDir, { CLICKHOUSE_DATA_PATH: clickhousePath });

      expect(code).toBe(1);
      expect(output).toBe(
        `CLICKHOUSE_DATA_PATH=${clickhousePath}: its filesystem has 16 MiB free, and at least 64 MiB are needed`,
      );
    },
    READY_TIMEOUT_MS,
  );

  it(
    'names the Postgres directory when the embedded Postgres cannot open its files',
    async () => {
      const dataDir = path.join(root, 'data');
      await mkdir(path.join(dataDir, 'postgres'), { recursive: true, mode: 0o700 });
      // A database directory of a Postgres major version PGlite is not.
      await writeFile(path.join(dataDir, 'postgres', 'PG_VERSION'), '9\n');

      const { code, output } = await startUntilExit(dataDir);

      expect(code).toBe(1);
      expect(output).toMatch(
        new RegExp(
          `^DATA_DIR=${dataDir}: the embedded Postgres could not open ${dataDir}/postgres: .+; ` +
            'its files may be damaged, or another program may have them open$',
        ),
      );
    },
    READY_TIMEOUT_MS,
  );
});
