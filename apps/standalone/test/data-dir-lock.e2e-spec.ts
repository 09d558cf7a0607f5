import { spawnSync } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  freePort,
  killApps,
  readInitialCredentials,
  READY_TIMEOUT_MS,
  standaloneEnv,
  startApp,
  stopApp,
  STOP_TIMEOUT_MS,
  waitForReady,
  type AppProcess,
} from './app-process';

/** A pid that no process has any more: what a killed server's pid file names. */
function deadPid(): number {
  return spawnSync('true').pid;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** `GET /api/organizations/` with the initial key: what a management call answers. */
async function organizationsStatus(baseUrl: string, key: string): Promise<number> {
  const response = await fetch(`${baseUrl}/api/organizations/`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  await response.arrayBuffer();
  return response.status;
}

describe('npm start: one process per DATA_DIR', () => {
  let dataDir: string;
  let first: AppProcess | undefined;
  let second: AppProcess | undefined;
  let port: number;
  let capturePort: number;
  let baseUrl: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-data-dir-lock-test-'));
    [port, capturePort] = [await freePort(), await freePort()];
    baseUrl = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await killApps(first, second);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(
    "refuses a second start during the first one's start-up, naming it, and the first serves on",
    async () => {
      // What an older version's kill -9 left: a pid file naming a dead process.
      await writeFile(
        path.join(dataDir, 'postgres.lock.json'),
        JSON.stringify({ pid: deadPid(), socketDir: path.join(dataDir, 'postgres-socket') }),
      );
      first = startApp('standalone', standaloneEnv(dataDir, port, capturePort));
      // The first has begun on the embedded Postgres (its socket directory exists) and is far from
      // ready: PGlite's initdb takes seconds.
      while (!(await exists(path.join(dataDir, 'postgres-socket')))) await sleep(20);
      second = startApp('standalone', standaloneEnv(dataDir, await freePort(), 0));

      const refused = await second.exited;
      await waitForReady(first, baseUrl);

      expect(refused.code).toBe(1);
      expect(second.output().trim()).toBe(
        `DATA_DIR=${dataDir}: in use by another process (pid ${first.child.pid}): one process per data directory. ` +
          'Stop that one first, or set another DATA_DIR',
      );
      const { personal_api_key: key } = await readInitialCredentials(dataDir);
      // Had the second removed the first's socket, these would answer 503 and 500 for good.
      for (let round = 0; round < 5; round++) {
        expect((await fetch(`${baseUrl}/_ready`)).status).toBe(200);
        expect(await organizationsStatus(baseUrl, key)).toBe(200);
      }
    },
    READY_TIMEOUT_MS * 2,
  );

  it(
    'refuses a start while the first serves, naming its pid and ports',
    async () => {
      second = startApp('standalone', standaloneEnv(dataDir, await freePort(), 0));

      const refused = await second.exited;

      expect(refused.code).toBe(1);
      expect(second.output().trim()).toBe(
        `DATA_DIR=${dataDir}: in use by another process (pid ${first!.child.pid}, management on port ${port}, ` +
          `capture on port ${capturePort}): one process per data directory. Stop that one first, or set another DATA_DIR`,
      );
      expect((await fetch(`${baseUrl}/_ready`)).status).toBe(200);
    },
    READY_TIMEOUT_MS,
  );

  it(
    'starts at once after the holder was killed with SIGKILL: the lock died with it',
    async () => {
      await killApps(first);
      const { personal_api_key: key } = await readInitialCredentials(dataDir);

      first = startApp('standalone', standaloneEnv(dataDir, port, capturePort));
      await waitForReady(first, baseUrl);

      expect(await organizationsStatus(baseUrl, key)).toBe(200);
      expect(await stopApp(first)).toEqual({ code: 0, signal: null });
    },
    READY_TIMEOUT_MS + STOP_TIMEOUT_MS,
  );
});
