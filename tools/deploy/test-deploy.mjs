#!/usr/bin/env node
// @ts-check
// `npm run test:deploy`, without Docker or a cluster: k8s/ rendered and validated offline, the compose
// file checked; the image built with podman (default and with chDB's engine); then the containers run
// against the machine's PostgreSQL and a Kafka this command starts, each stopped with SIGTERM under load.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { testServices } from '../test-services.mjs';
import { buildImage, EMBEDDED_IMAGE, ensureBaseImage, ensureContainerTools, IMAGE } from './image.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** @param {string} message */
function log(message) {
  console.log(`[test:deploy] ${message}`);
}

/** @type {NodeJS.Signals | null} */
let receivedSignal = null;
/** @type {import('node:child_process').ChildProcess | null} */
let child = null;
/** @returns {void} */
const throwIfInterrupted = () => {
  if (receivedSignal) throw new Error(`interrupted by ${receivedSignal}`);
};
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.on(signal, () => {
    receivedSignal = signal;
    child?.kill(signal);
  });
}

const services = testServices({ log, throwIfInterrupted });

/**
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<number>}
 */
function step(command, args, env = process.env) {
  log(`running ${path.basename(command)} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    const running = spawn(command, args, { cwd: repoRoot, env, stdio: 'inherit' });
    child = running;
    running.on('error', reject);
    running.on('close', (code) => {
      child = null;
      resolve(code ?? 1);
    });
  });
}

async function main() {
  /** @type {string[]} */
  const failures = [];
  /**
   * @param {string} name
   * @param {string} command
   * @param {string[]} args
   * @param {NodeJS.ProcessEnv} [env]
   */
  const check = async (name, command, args, env) => {
    const code = await step(command, args, env);
    if (code !== 0) failures.push(`${name} (exit ${code})`);
    throwIfInterrupted();
  };

  await check('k8s manifests', process.execPath, ['tools/deploy/check-manifests.mjs']);
  // Every check must be able to fail: broken copies of k8s/ are all refused.
  await check('k8s checks self-test', process.execPath, ['tools/deploy/check-manifests.mjs', '--self-test']);
  if ((await services.run('sh', ['-c', 'command -v docker-compose'])).code !== 0) {
    log('installing docker-compose (apt-get) to validate docker/compose.yaml offline');
    await services.aptInstall(['docker-compose']);
  }
  await check('compose file', process.execPath, ['tools/deploy/check-compose.mjs']);

  await ensureContainerTools({ ...services, log });
  await ensureBaseImage({ ...services, log });
  throwIfInterrupted();
  const built = [];
  for (const [tag, embeddedClickHouse] of /** @type {const} */ ([
    [IMAGE, false],
    [EMBEDDED_IMAGE, true],
  ])) {
    built.push(await buildImage({ ...services, log }, { tag, embeddedClickHouse }));
    throwIfInterrupted();
  }

  const childEnv = { ...process.env, HOGBASE_IMAGE: IMAGE, HOGBASE_EMBEDDED_IMAGE: EMBEDDED_IMAGE };
  /** @type {import('../test-services.mjs').Stop[]} */
  const stops = [];
  try {
    await services.startPostgres(childEnv, stops);
    await services.startKafka(childEnv, stops);
    throwIfInterrupted();
    await check(
      'containers',
      process.execPath,
      [
        '--experimental-vm-modules',
        '--disable-warning=ExperimentalWarning',
        path.join(repoRoot, 'node_modules/jest/bin/jest.js'),
        '-c',
        'docker/test/jest.config.js',
      ],
      childEnv,
    );
  } finally {
    await services.stopServices(stops);
  }

  for (const { tag, size } of built) log(`image ${tag}: ${(size / 1e6).toFixed(0)} MB`);
  if (failures.length > 0) throw new Error(`failed: ${failures.join(', ')}`);
}

main().then(
  () => {
    log('exit 0');
  },
  (error) => {
    log(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(receivedSignal === 'SIGINT' ? 130 : receivedSignal === 'SIGTERM' ? 143 : 1);
  },
);
