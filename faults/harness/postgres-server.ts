import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, runProcess } from '@hogbase/test-support';

/** Not a superuser, so the suite may take LOGIN away from it. */
export const APP_ROLE = 'hogbase';
const APP_PASSWORD = 'hogbase-faults';
const APP_DATABASE = 'hogbase';
const COMMAND_TIMEOUT_MS = 60_000;

/** In a temporary folder: the suite stops it and kills sessions, which it must not do to the shared cluster. */
export interface PostgresServer {
  port: number;
  /** The app role, over TCP on 127.0.0.1. */
  appUrl: string;
  /** As `postgres`, over the Unix socket. */
  superuser<T extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** `fast` rolls back and disconnects; `immediate` is a crash (recovery at start). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(path.join(root, name, 'bin', 'initdb')))
        .sort((left, right) => Number(right) - Number(left))
    : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL server binaries under ${root} (initdb, pg_ctl)`);
  return path.join(root, versions[0], 'bin');
}

/** initdb refuses root: as root, the server's commands run as the OS user `postgres`. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

async function runServerCommand(command: string, args: string[]): Promise<string> {
  const [file, argv] = asServerUser(command, args);
  const result = await runProcess(file, argv, { cwd: '/', env: process.env, timeoutMs: COMMAND_TIMEOUT_MS });
  if (result.code !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (exit ${String(result.code)}):\n${result.stdout}${result.stderr}`,
    );
  }
  return result.stdout;
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const bin = binDir();
  const root = await mkdtemp(path.join(tmpdir(), 'hogbase-faults-pg-'));
  if (process.getuid?.() === 0) await chown(root, ...postgresIds());
  const dataDir = path.join(root, 'data');
  const port = await freePort();
  const pgCtl = path.join(bin, 'pg_ctl');

  // Last resort if the test process dies without destroy(): no server left behind.
  const onExit = () => {
    const [file, argv] = asServerUser(pgCtl, ['-D', dataDir, 'stop', '-m', 'immediate']);
    spawnSync(file, argv, { cwd: '/', stdio: 'ignore' });
  };
  process.on('exit', onExit);

  await runServerCommand(path.join(bin, 'initdb'), [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--no-sync',
  ]);
  const start = async () => {
    await runServerCommand(pgCtl, [
      '-D',
      dataDir,
      '-l',
      path.join(root, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
      'start',
    ]);
  };
  await start();

  let database = 'postgres';
  const superuser = async <T extends object>(sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new Client({ host: root, port, user: 'postgres', database });
    client.on('error', () => undefined); // The server may go away under the suite: the query rejects.
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  await superuser(`CREATE ROLE ${APP_ROLE} LOGIN PASSWORD '${APP_PASSWORD}'`);
  await superuser(`CREATE DATABASE ${APP_DATABASE} OWNER ${APP_ROLE}`);
  database = APP_DATABASE;

  return {
    port,
    appUrl: `postgres://${APP_ROLE}:${APP_PASSWORD}@127.0.0.1:${port}/${APP_DATABASE}`,
    superuser,
    stop: async (mode) => {
      await runServerCommand(pgCtl, ['-D', dataDir, '-m', mode, '-w', 'stop']);
    },
    start,
    destroy: async () => {
      onExit();
      process.off('exit', onExit);
      await rm(root, { recursive: true, force: true });
    },
  };
}

function postgresIds(): [number, number] {
  const result = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (result.status !== 0 || group.status !== 0) {
    throw new Error('there is no OS user `postgres` to run the PostgreSQL server as (root may not)');
  }
  return [Number(result.stdout.trim()), Number(group.stdout.trim())];
}
