// @ts-check
// The engines `npm test` and `npm run test:deploy` start and stop: the machine's PostgreSQL, Kafka and
// S3Mock from cached jars, and Debian packages a suite needs. Each start pushes its stop.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startKafkaBroker } from './kafka-broker.mjs';
import { startS3Server } from './s3-server.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const POSTGRES_VERSION = '15';
const POSTGRES_CLUSTER = 'main';
const TEST_ROLE = 'hogbase_test';
const TEST_ROLE_PASSWORD = 'hogbase_test';
const POSTGRES_READY_TIMEOUT_MS = 30_000;

/** @typedef {() => Promise<void>} Stop */

/** @typedef {Record<string, string | undefined>} ChildEnv */

/**
 * `throwIfInterrupted`: a Ctrl-C during start-up still stops what already started.
 * @param {{ log: (message: string) => void, throwIfInterrupted?: () => void }} options
 */
export function testServices({ log, throwIfInterrupted = () => undefined }) {
  /**
   * Resolves with the exit code, so callers decide what a failure means; output captured unless `inherit`.
   * @param {string} command
   * @param {string[]} args
   * @param {{ inherit?: boolean, cwd?: string, env?: NodeJS.ProcessEnv }} [options]
   * @returns {Promise<{ code: number, signal: NodeJS.Signals | null, stdout: string, stderr: string }>}
   */
  function run(command, args, { inherit = false, cwd = repoRoot, env = process.env } = {}) {
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        cwd,
        env,
        stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (/** @type {Buffer} */ chunk) => (stdout += chunk.toString()));
      child.stderr?.on('data', (/** @type {Buffer} */ chunk) => (stderr += chunk.toString()));
      child.on('error', (error) =>
        reject(new Error(`cannot run ${command}: ${error.message}`, { cause: error })),
      );
      child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, stdout, stderr }));
    });
  }

  /**
   * @param {string} command
   * @param {string[]} args
   * @param {Parameters<typeof run>[2]} [options]
   */
  async function runOrThrow(command, args, options) {
    const result = await run(command, args, options);
    if (result.code !== 0) {
      const output = `${result.stdout}${result.stderr}`.trim();
      throw new Error(
        `${command} ${args.join(' ')} failed (exit ${result.code})${output ? `:\n${output}` : ''}`,
      );
    }
    return result;
  }

  async function findPostgresCluster() {
    const { stdout } = await runOrThrow('pg_lsclusters', ['--no-header']);
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

  /** @param {number} port */
  async function waitForPostgres(port) {
    const deadline = Date.now() + POSTGRES_READY_TIMEOUT_MS;
    for (;;) {
      throwIfInterrupted();
      const { code } = await run('pg_isready', ['-q', '-h', '127.0.0.1', '-p', String(port)]);
      if (code === 0) return;
      if (Date.now() > deadline) {
        throw new Error(`PostgreSQL on 127.0.0.1:${port} not ready after ${POSTGRES_READY_TIMEOUT_MS} ms`);
      }
      await sleep(250);
    }
  }

  /** @param {number} port */
  async function ensureTestRole(port) {
    if (process.getuid?.() !== 0) {
      throw new Error(
        `creating the ${TEST_ROLE} role needs root (runuser -u postgres); ` +
          'run as root or set TEST_DATABASE_URL',
      );
    }
    // SUPERUSER so tests can CREATE DATABASE and EXTENSION: only on a local cluster, on 127.0.0.1.
    const sql = `DO $$
  BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${TEST_ROLE}') THEN
      CREATE ROLE ${TEST_ROLE} LOGIN SUPERUSER PASSWORD '${TEST_ROLE_PASSWORD}';
    ELSE
      ALTER ROLE ${TEST_ROLE} LOGIN SUPERUSER PASSWORD '${TEST_ROLE_PASSWORD}';
    END IF;
  END
  $$;`;
    // cwd '/': the postgres user may not be allowed into the repository directory.
    await runOrThrow(
      'runuser',
      ['-u', 'postgres', '--', 'psql', '-X', '-q', '-p', String(port), '-v', 'ON_ERROR_STOP=1', '-c', sql],
      { cwd: '/' },
    );
  }

  /**
   * Pushes a stop only if it starts the cluster itself.
   * @param {ChildEnv} childEnv
   * @param {Stop[]} stops
   */
  async function startPostgres(childEnv, stops) {
    if (process.env.TEST_DATABASE_URL) {
      log('PostgreSQL: using TEST_DATABASE_URL from the environment');
      childEnv.TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
      return;
    }

    const cluster = await findPostgresCluster();
    if (cluster.online) {
      log(
        `PostgreSQL ${POSTGRES_VERSION}/${POSTGRES_CLUSTER} already running on port ${cluster.port}; will leave it running`,
      );
    } else {
      log(`starting PostgreSQL ${POSTGRES_VERSION}/${POSTGRES_CLUSTER} on port ${cluster.port}`);
      // Before starting: a half-started cluster must be stopped too.
      stops.push(async () => {
        log(`stopping PostgreSQL ${POSTGRES_VERSION}/${POSTGRES_CLUSTER}`);
        const { code, stderr } = await run('pg_ctlcluster', [POSTGRES_VERSION, POSTGRES_CLUSTER, 'stop']);
        if (code !== 0) log(`could not stop PostgreSQL: ${stderr.trim()}`);
      });
      await runOrThrow('pg_ctlcluster', [POSTGRES_VERSION, POSTGRES_CLUSTER, 'start']);
    }
    await waitForPostgres(cluster.port);
    throwIfInterrupted();
    await ensureTestRole(cluster.port);
    childEnv.TEST_DATABASE_URL = `postgres://${TEST_ROLE}:${TEST_ROLE_PASSWORD}@127.0.0.1:${cluster.port}/postgres`;
    log(`PostgreSQL ready: TEST_DATABASE_URL=postgres://${TEST_ROLE}:***@127.0.0.1:${cluster.port}/postgres`);
  }

  /**
   * KAFKA_BROKERS when set, else a broker from tools/kafka-broker.mjs.
   * @param {ChildEnv} childEnv
   * @param {Stop[]} stops
   */
  async function startKafka(childEnv, stops) {
    if (process.env.KAFKA_BROKERS) {
      log(`Kafka: using KAFKA_BROKERS=${process.env.KAFKA_BROKERS} from the environment`);
      childEnv.KAFKA_BROKERS = process.env.KAFKA_BROKERS;
      return;
    }
    log('starting a Kafka broker (single KRaft node on 127.0.0.1, jars cached in ~/.cache/hogbase)');
    // It resolves only once the broker answers and stops a failed start itself; its exit hook kills
    // the JVM if this process dies without stop().
    const kafka = await startKafkaBroker({ port: 0, log });
    stops.push(() => kafka.stop());
    childEnv.KAFKA_BROKERS = kafka.brokers;
  }

  /**
   * S3_ENDPOINT when set, else S3Mock from tools/s3-server.mjs.
   * @param {ChildEnv} childEnv
   * @param {Stop[]} stops
   */
  async function startS3(childEnv, stops) {
    if (process.env.S3_ENDPOINT) {
      log(`S3: using S3_ENDPOINT=${process.env.S3_ENDPOINT} from the environment`);
      childEnv.S3_ENDPOINT = process.env.S3_ENDPOINT;
      return;
    }
    log('starting an S3-compatible server (Adobe S3Mock on 127.0.0.1, jar cached in ~/.cache/hogbase)');
    // As with Kafka: no half-started server to register.
    const s3 = await startS3Server({ port: 0, log });
    stops.push(() => s3.stop());
    childEnv.S3_ENDPOINT = s3.endpoint;
  }

  /**
   * CHROMIUM_PATH, or Debian's `chromium`, installed when missing. A machine that cannot install it
   * still runs every other suite: the reason goes to CHROMIUM_UNAVAILABLE and the browser suites skip.
   * @param {ChildEnv} childEnv
   */
  async function ensureChromium(childEnv) {
    if (process.env.CHROMIUM_PATH) {
      childEnv.CHROMIUM_PATH = process.env.CHROMIUM_PATH;
      return;
    }
    const debianChromium = '/usr/bin/chromium';
    if (!existsSync(debianChromium)) {
      try {
        if (process.getuid?.() !== 0) {
          throw new Error('installing it needs root');
        }
        log("installing Debian's chromium package for the browser tests (apt-get)");
        await aptInstall(['chromium']);
      } catch (error) {
        const reason = `${debianChromium} is missing and could not be installed (${
          error instanceof Error ? error.message.split('\n')[0] : String(error)
        }): install Debian's chromium package, or set CHROMIUM_PATH`;
        log(`WARNING: the browser suites will be SKIPPED: ${reason}`);
        childEnv.CHROMIUM_UNAVAILABLE = reason;
        return;
      }
    }
    childEnv.CHROMIUM_PATH = debianChromium;
  }

  /**
   * These machines run the tests as root.
   * @param {string[]} packages
   */
  async function aptInstall(packages) {
    const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await runOrThrow('apt-get', ['update', '-qq'], { env: aptEnv });
    await runOrThrow('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
      env: aptEnv,
    });
  }

  /** @param {Stop[]} stops */
  async function stopServices(stops) {
    for (const stop of [...stops].reverse()) {
      try {
        await stop();
      } catch (error) {
        log(`stop failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  return { run, runOrThrow, startPostgres, startKafka, startS3, ensureChromium, aptInstall, stopServices };
}
