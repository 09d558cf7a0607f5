// @ts-check
// `npm test`: starts the services the test tiers need (unless they are already given), runs every
// project's `test` target through nx, then stops exactly what it started and exits with nx's code.
//
// Arguments after `--` go to `nx run-many` unchanged, for example:
//   npm test -- --projects=management
//   npm test -- --projects=test-support --skip-nx-cache
//
// Environment:
//   TEST_DATABASE_URL  use this PostgreSQL (a role that may CREATE DATABASE) instead of the
//                      machine's PostgreSQL 15 cluster `main`.
//   KAFKA_BROKERS      use these Kafka brokers (host:port,...) instead of starting a single-node
//                      KRaft broker from the cached jars (tools/kafka-broker.mjs).
//   S3_ENDPOINT        use this S3-compatible server (http://host:port, path-style) instead of
//                      starting Adobe S3Mock from the cached jar (tools/s3-server.mjs).
//   EGRESS_ALLOWED_PRIVATE_NETWORKS
//                      passed on; 127.0.0.0/8 when unset, since every test service is on loopback.
//   CI                 passed through to nx and jest.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkCodeMap } from './check-code-map.mjs';
import { parseJson } from './json.mjs';
import { testServices } from './test-services.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binDir = path.join(repoRoot, 'node_modules', '.bin');

/** @type {Partial<Record<NodeJS.Signals, number>>} */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 };

/**
 * Set once SIGINT/SIGTERM arrives; start-up steps check it so a Ctrl-C during start-up still cleans up.
 * @type {'SIGINT' | 'SIGTERM' | null}
 */
let receivedSignal = null;
/**
 * The running nx process, so signals can be forwarded to it.
 * @type {import('node:child_process').ChildProcess | null}
 */
let nxProcess = null;

/** @param {string} message */
function log(message) {
  console.log(`[npm test] ${message}`);
}

class InterruptedError extends Error {}

/** @returns {void} */
function throwIfInterrupted() {
  if (receivedSignal) throw new InterruptedError(`interrupted by ${receivedSignal}`);
}

const { startPostgres, startKafka, startS3, ensureChromium, stopServices } = testServices({
  log,
  throwIfInterrupted,
});

/**
 * Starts every service the tests need and fills `childEnv` with their URLs.
 * Returns stop callbacks, in start order; they run in reverse. If a start fails (or a signal
 * arrives) part-way, what already started is stopped before the error propagates.
 *
 * @param {import('./test-services.mjs').ChildEnv} childEnv
 */
async function startServices(childEnv) {
  /** @type {import('./test-services.mjs').Stop[]} */
  const stops = [];
  try {
    await startPostgres(childEnv, stops);
    throwIfInterrupted();

    await startKafka(childEnv, stops);
    throwIfInterrupted();

    await startS3(childEnv, stops);
    throwIfInterrupted();

    await ensureChromium(childEnv);
    throwIfInterrupted();

    return stops;
  } catch (error) {
    await stopServices(stops);
    throw error;
  }
}

/**
 * @param {NodeJS.ProcessEnv} childEnv
 * @param {string[]} extraArgs
 */
function runNx(childEnv, extraArgs) {
  return runTool(childEnv, 'nx', [
    'run-many',
    '-t',
    'test',
    '--parallel=1',
    '--outputStyle=stream',
    ...extraArgs,
  ]);
}

/**
 * The static checks CI would otherwise skip: the whole repository type-checks and lints with no
 * warning. They run only for a full `npm test`, not when arguments narrow the run.
 *
 * @param {NodeJS.ProcessEnv} childEnv
 */
async function runStaticChecks(childEnv) {
  const typecheck = await runTool(childEnv, 'tsc', ['-p', 'tsconfig.json', '--noEmit']);
  if (typecheck !== 0) return typecheck;
  // tools/ is JavaScript, checked by its own tsconfig (checkJs, Node's ESM resolution).
  const toolsTypecheck = await runTool(childEnv, 'tsc', ['-p', 'tools/tsconfig.json']);
  if (toolsTypecheck !== 0) return toolsTypecheck;
  // The code map names files and symbols; it is only useful while they all exist.
  const codeMap = checkCodeMap(path.join(repoRoot, 'docs/code-map.md'));
  for (const problem of codeMap.problems) log(problem);
  if (codeMap.entries === 0 || codeMap.problems.length > 0) return 1;
  const lint = await runTool(childEnv, 'nx', [
    'run-many',
    '-t',
    'lint',
    '--parallel=2',
    '--outputStyle=stream',
  ]);
  if (lint !== 0) return lint;
  // bench/, faults/ and tools/ are not nx projects: linted on their own.
  return runTool(childEnv, 'eslint', ['bench', 'faults', 'docker/test', 'tools', '--max-warnings', '0']);
}

/**
 * @param {NodeJS.ProcessEnv} childEnv
 * @param {string} tool
 * @param {string[]} args
 * @returns {Promise<number>}
 */
function runTool(childEnv, tool, args) {
  log(`running ${tool} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(binDir, tool), args, { cwd: repoRoot, env: childEnv, stdio: 'inherit' });
    nxProcess = child;
    child.on('error', (error) => reject(new Error(`cannot run ${tool}: ${error.message}`, { cause: error })));
    child.on('close', (code, signal) => {
      nxProcess = null;
      resolve(code ?? (signal && SIGNAL_EXIT_CODES[signal]) ?? 1);
    });
  });
}

/** @param {'SIGINT' | 'SIGTERM'} signal */
function onSignal(signal) {
  if (receivedSignal) {
    // A second Ctrl-C means "now": kill nx hard, but still stop services on the way out.
    nxProcess?.kill('SIGKILL');
    return;
  }
  receivedSignal = signal;
  log(`received ${signal}, shutting down`);
  // NOTE: on Ctrl-C the terminal already signalled nx (same process group); forwarding is for
  // `kill <pid>` from a supervisor, which only reaches us.
  nxProcess?.kill(signal);
}

/**
 * One line of tools/jest-summary-reporter.js.
 * @typedef {{ passed: number, failed: number, skipped: number }} RunTotals
 */

/**
 * The closing line: totals over every Jest run, as `N passed, N failed[, N skipped]`.
 *
 * @param {string} file
 */
function printSummary(file) {
  /** @type {RunTotals[]} */
  const runs = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => /** @type {RunTotals} */ (parseJson(line)))
    : [];
  const total = (/** @type {keyof RunTotals} */ key) => runs.reduce((sum, run) => sum + run[key], 0);
  const skipped = total('skipped');
  console.log(
    `tests: ${total('passed')} passed, ${total('failed')} failed${skipped ? `, ${skipped} skipped` : ''}`,
  );
}

async function main() {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // npm already strips the `--` separator; tolerate one when called directly.
  const extraArgs = process.argv.slice(2).filter((arg, index) => !(index === 0 && arg === '--'));

  if (!existsSync(path.join(binDir, 'nx'))) {
    log('node_modules/.bin/nx is missing: run `npm ci` first');
    process.exit(1);
  }

  const childEnv = {
    ...process.env,
    // node_modules/.bin first so nx and jest run on the pinned Node (the `node` devDependency).
    PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
    NX_DAEMON: 'false',
    NX_NO_CLOUD: 'true',
    // The test services (PostgreSQL, Kafka, S3Mock) and the tests' receivers listen on loopback,
    // which the server refuses to reach unless allowed. Tests that check the refusal build their own
    // policy; the test helpers that start apps set this too (test:faults runs without this script).
    EGRESS_ALLOWED_PRIVATE_NETWORKS: process.env.EGRESS_ALLOWED_PRIVATE_NETWORKS ?? '127.0.0.0/8',
    TEST_SUMMARY_FILE: path.join(mkdtempSync(path.join(tmpdir(), 'hogbase-test-')), 'summary.jsonl'),
    // NestJS 12 ships as ES modules; Jest loads them through require(esm), which needs vm modules.
    NODE_OPTIONS: [
      process.env.NODE_OPTIONS,
      '--experimental-vm-modules',
      '--disable-warning=ExperimentalWarning',
    ]
      .filter(Boolean)
      .join(' '),
  };

  let exitCode = 1;
  /** @type {import('./test-services.mjs').Stop[]} */
  let stops = [];
  try {
    if (extraArgs.length === 0) {
      exitCode = await runStaticChecks(childEnv);
      throwIfInterrupted();
      if (exitCode !== 0) throw new Error('static checks failed');
    }
    stops = await startServices(childEnv);
    throwIfInterrupted();
    exitCode = await runNx(childEnv, extraArgs);
    printSummary(/** @type {string} */ (childEnv.TEST_SUMMARY_FILE));
  } catch (error) {
    if (error instanceof InterruptedError) {
      log(error.message);
    } else {
      log(`error: ${error instanceof Error ? error.message : String(error)}`);
    }
    exitCode = exitCode || 1;
  } finally {
    await stopServices(stops);
  }

  if (receivedSignal) exitCode = /** @type {number} */ (SIGNAL_EXIT_CODES[receivedSignal]);
  log(`exit ${exitCode}`);
  process.exit(exitCode);
}

await main();
