import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

// NOTE: the same steps as tools/test.mjs (which exports nothing): the machine's PostgreSQL 15
// cluster `main`, started only if it is down, and a local SUPERUSER role that may CREATE DATABASE.

const POSTGRES_VERSION = '15';
const POSTGRES_CLUSTER = 'main';
const BENCH_ROLE = 'hogbase_test';
const BENCH_ROLE_PASSWORD = 'hogbase_test';
const READY_TIMEOUT_MS = 30_000;

const execFileAsync = promisify(execFile);

async function run(command: string, args: string[], cwd?: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { cwd });
    return stdout;
  } catch (error) {
    const output = error as { stdout?: string; stderr?: string; message: string };
    const detail = `${output.stdout ?? ''}${output.stderr ?? ''}`.trim() || output.message;
    throw new Error(`${command} ${args.join(' ')} failed: ${detail}`, { cause: error });
  }
}

export interface PostgresServer {
  /** A URL whose role may CREATE DATABASE (database `postgres`). */
  url: string;
  /** Stops the cluster if this process started it; otherwise leaves it as it was. */
  stop(): Promise<void>;
}

async function findCluster(): Promise<{ port: number; online: boolean }> {
  const stdout = await run('pg_lsclusters', ['--no-header']);
  for (const line of stdout.split('\n')) {
    const [version, cluster, port, status] = line.trim().split(/\s+/);
    if (version === POSTGRES_VERSION && cluster === POSTGRES_CLUSTER) {
      return { port: Number(port), online: status.startsWith('online') };
    }
  }
  throw new Error(
    `PostgreSQL ${POSTGRES_VERSION} cluster "${POSTGRES_CLUSTER}" not found by pg_lsclusters; ` +
      'install it or set TEST_DATABASE_URL',
  );
}

async function waitForPostgres(port: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    try {
      await run('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port)]);
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}

async function ensureRole(port: number): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      `creating the ${BENCH_ROLE} role needs root (runuser -u postgres); run as root or set TEST_DATABASE_URL`,
    );
  }
  const sql = `DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${BENCH_ROLE}') THEN
    CREATE ROLE ${BENCH_ROLE} LOGIN SUPERUSER PASSWORD '${BENCH_ROLE_PASSWORD}';
  ELSE
    ALTER ROLE ${BENCH_ROLE} LOGIN SUPERUSER PASSWORD '${BENCH_ROLE_PASSWORD}';
  END IF;
END
$$;`;
  // cwd '/': the postgres user may not be allowed into the repository directory.
  await run(
    'runuser',
    ['-u', 'postgres', '--', 'psql', '-X', '-q', '-p', String(port), '-v', 'ON_ERROR_STOP=1', '-c', sql],
    '/',
  );
}

/** `databaseUrl` when given; else the machine's cluster, started if it is down. */
export async function startPostgres(
  databaseUrl: string | undefined,
  log: (message: string) => void,
): Promise<PostgresServer> {
  if (databaseUrl) {
    log('PostgreSQL: using TEST_DATABASE_URL');
    return { url: databaseUrl, stop: () => Promise.resolve() };
  }
  const cluster = await findCluster();
  let startedHere = false;
  const stop = async () => {
    if (!startedHere) return;
    log(`stopping PostgreSQL ${POSTGRES_VERSION}/${POSTGRES_CLUSTER}`);
    await run('pg_ctlcluster', [POSTGRES_VERSION, POSTGRES_CLUSTER, 'stop']);
  };
  if (!cluster.online) {
    log(`starting PostgreSQL ${POSTGRES_VERSION}/${POSTGRES_CLUSTER} on port ${cluster.port}`);
    // Marked before the start: a half-started cluster must be stopped too.
    startedHere = true;
    try {
      await run('pg_ctlcluster', [POSTGRES_VERSION, POSTGRES_CLUSTER, 'start']);
    } catch (error) {
      await stop().catch(() => undefined);
      throw error;
    }
  }
  try {
    await waitForPostgres(cluster.port);
    await ensureRole(cluster.port);
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  log(`PostgreSQL ${POSTGRES_VERSION}/${POSTGRES_CLUSTER} on port ${cluster.port}`);
  return {
    url: `postgres://${BENCH_ROLE}:${BENCH_ROLE_PASSWORD}@127.0.0.1:${cluster.port}/postgres`,
    stop,
  };
}
