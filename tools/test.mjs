// @ts-check
// `npm test`: starts the services the test tiers need (unless given: TEST_DATABASE_URL, KAFKA_BROKERS,
// S3_ENDPOINT), runs every project's `test` target through nx (arguments after `--` go to
// `nx run-many`), then stops exactly what it started and exits with nx's code.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkCodeMap } from './check-code-map.mjs';
import { checkFileRoles } from './check-file-roles.mjs';
import { parseJson } from './json.mjs';
import { testServices } from './test-services.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binDir = path.join(repoRoot, 'node_modules', '.bin');

/** @type {Partial<Record<NodeJS.Signals, number>>} */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 };

/**
 * Checked by start-up steps, so a Ctrl-C during start-up still cleans up.
 * @type {'SIGINT' | 'SIGTERM' | null}
 */
let receivedSignal = null;
/** @type {import('node:child_process').ChildProcess | null} */
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
 * Stop callbacks in start order; a failure or signal part-way stops what already started first.
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
 * The type-check and lint CI would otherwise skip; only for a full `npm test`.
 * @param {NodeJS.ProcessEnv} childEnv
 */
async function runStaticChecks(childEnv) {
  const typecheck = await runTool(childEnv, 'tsc', ['-p', 'tsconfig.json', '--noEmit']);
  if (typecheck !== 0) return typecheck;
  const toolsTypecheck = await runTool(childEnv, 'tsc', ['-p', 'tools/tsconfig.json']);
  if (toolsTypecheck !== 0) return toolsTypecheck;
  const codeMap = checkCodeMap(path.join(repoRoot, 'docs/code-map.md'));
  for (const problem of codeMap.problems) log(problem);
  if (codeMap.entries === 0 || codeMap.problems.length > 0) return 1;
  const fileRoles = checkFileRoles(repoRoot);
  for (const problem of fileRoles.problems) log(problem);
  if (fileRoles.files === 0 || fileRoles.problems.length > 0) return 1;
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
  // On Ctrl-C the terminal already signalled nx; forwarding is for a supervisor's `kill <pid>`.
  nxProcess?.kill(signal);
}

/** One line of tools/jest-summary-reporter.js. @typedef {{ passed: number, failed: number, skipped: number }} RunTotals */

/** `N passed, N failed[, N skipped]` over every Jest run. @param {string} file */
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
    // So nx and jest run on the pinned Node.
    PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
    NX_DAEMON: 'false',
    NX_NO_CLOUD: 'true',
    // The test services listen on loopback, which the server refuses unless allowed.
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
