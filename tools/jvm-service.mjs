// @ts-check
// What the Java test services (tools/kafka-broker.mjs, tools/s3-server.mjs) share: a Maven-fetched jar
// cache, loopback ports, class-data sharing, one supervised JVM, a readiness loop, the command line.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseJson } from './json.mjs';

export const MAVEN_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
const MARKER_FILE = '.complete.json';
export const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;

/** `${XDG_CACHE_HOME:-~/.cache}/hogbase/<name>` @param {string} name */
export function hogbaseCacheDir(name) {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'hogbase', name);
}

/** @param {number} since  Date.now() at the start */
export function seconds(since) {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/** @param {string} text */
export function tail(text, lines = 60) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/** @typedef {{ code: number, signal: NodeJS.Signals | null, output: string }} RunResult */

/**
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd?: string, hint?: string }} [options]  `hint`: added to the error when it cannot run
 * @returns {Promise<RunResult>}
 */
export function run(command, args, { cwd, hint } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (/** @type {Buffer} */ chunk) => (output += chunk.toString()));
    child.stderr.on('data', (/** @type {Buffer} */ chunk) => (output += chunk.toString()));
    child.on('error', (error) =>
      reject(
        new Error(`cannot run ${command}: ${error.message}${hint ? ` (${hint})` : ''}`, {
          cause: error,
        }),
      ),
    );
    child.on('close', (code, signal) => resolve({ code: code ?? 1, signal, output }));
  });
}

/**
 * Maven in batch, quiet mode.
 * @param {string[]} args
 * @param {{ cwd?: string, hint?: string, what: string }} options
 */
export async function runMaven(args, { cwd, hint, what }) {
  const result = await run('mvn', ['-B', '-q', ...args], { cwd, hint });
  if (result.code !== 0) {
    throw new Error(`mvn could not fetch ${what} (exit ${result.code}):\n${tail(result.output, 40)}`);
  }
  return result;
}

/**
 * `complete(marker)` of a complete `version` fetch; null when there is none, or `complete` throws.
 * @template T
 * @param {string} cacheDir
 * @param {string} version
 * @param {(marker: CacheMarker) => T} complete
 * @returns {T | null}
 */
export function readCompleteCache(cacheDir, version, complete) {
  try {
    const marker = /** @type {CacheMarker} */ (
      parseJson(readFileSync(path.join(cacheDir, MARKER_FILE), 'utf8'))
    );
    return marker.version === version ? complete(marker) : null;
  } catch {
    return null;
  }
}

/** @typedef {{ version: string } & Record<string, unknown>} CacheMarker */

/**
 * The last step of a fill: the marker makes the staging folder a complete cache.
 * @param {string} staging
 * @param {CacheMarker} marker
 */
export async function writeMarker(staging, marker) {
  await fs.writeFile(path.join(staging, MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
}

/**
 * Of fetches whose process is gone.
 * @param {string} parent
 * @param {string} base
 */
async function removeStaleStaging(parent, base) {
  const prefix = `${base}.partial-`;
  for (const name of await fs.readdir(parent).catch(() => [])) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) continue;
    await fs.rm(path.join(parent, name), { recursive: true, force: true });
  }
}

/**
 * The fetch goes to a staging folder renamed into place once complete (`fill` writes the marker
 * last): an interrupted fetch never leaves a half cache, and concurrent fetches do not collide.
 * @param {object} options
 * @param {string} options.cacheDir  absolute
 * @param {(dir: string) => T | null} options.readComplete  null when `dir` is absent or incomplete
 * @param {(staging: string) => Promise<void>} options.fill  into the (not yet created) staging folder
 * @param {string} options.what  'the Kafka jar cache'
 * @param {string} options.fetching
 * @param {(complete: T) => string} options.fetched
 * @param {(message: string) => void} options.log
 * @returns {Promise<T>}
 * @template T
 */
export async function ensureCached({ cacheDir, readComplete, fill, what, fetching, fetched, log }) {
  const parent = path.dirname(cacheDir);
  const base = path.basename(cacheDir);
  const cached = readComplete(cacheDir);
  if (cached) {
    await removeStaleStaging(parent, base);
    return cached;
  }

  await fs.mkdir(parent, { recursive: true });
  await removeStaleStaging(parent, base);

  const staging = path.join(parent, `${base}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  const started = Date.now();
  log(fetching);
  try {
    await fill(staging);

    // A folder without a valid marker (an older layout, a manual copy) is replaced.
    if (existsSync(cacheDir) && !readComplete(cacheDir)) {
      await fs.rm(cacheDir, { recursive: true, force: true });
    }
    try {
      await fs.rename(staging, cacheDir);
    } catch (error) {
      // Another process committed the same fetch first: use theirs.
      if (!readComplete(cacheDir)) throw error;
      await fs.rm(staging, { recursive: true, force: true });
    }
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    throw error;
  }
  const complete = readComplete(cacheDir);
  if (!complete) throw new Error(`${what} ${cacheDir} is incomplete after the fetch`);
  log(`${fetched(complete)} in ${seconds(started)}`);
  return complete;
}

/**
 * Free a moment ago on 127.0.0.1 (0 picks one).
 * @param {number} port
 * @returns {Promise<number>}
 */
function probePort(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const { port: bound } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(bound));
    });
  });
}

/**
 * `port` when free (else throws `busy(reason)`), or for 0 a free port other than `avoid`.
 * @param {number} port
 * @param {{ avoid?: number, busy: (reason: string) => string }} options
 */
export async function choosePort(port, { avoid, busy }) {
  if (port === 0) {
    for (;;) {
      const free = await probePort(0);
      if (free !== avoid) return free;
    }
  }
  try {
    return await probePort(port);
  } catch (error) {
    const { code, message } = /** @type {NodeJS.ErrnoException} */ (error);
    throw new Error(busy(code ?? message), { cause: error });
  }
}

/**
 * The given folder (created, kept), or a fresh temp folder the caller removes (`temporary: true`).
 * @param {string | undefined} dir
 * @param {string} tempPrefix
 */
export async function serviceFolder(dir, tempPrefix) {
  if (dir) {
    dir = path.resolve(dir);
    await fs.mkdir(dir, { recursive: true });
    return { dir, temporary: false };
  }
  return { dir: await fs.mkdtemp(tempPrefix), temporary: true };
}

export function javaBinary() {
  return process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

/**
 * `\n<hint>` when a JVM's output says it is too old for the classes it ran, else ''.
 * @param {string} output
 * @param {string} hint
 */
export function javaVersionHint(output, hint) {
  return /UnsupportedClassVersionError/.test(output) ? `\n${hint}` : '';
}

/** Null when it cannot be found. @param {string} java */
async function resolveJava(java) {
  const candidates = java.includes(path.sep)
    ? [java]
    : (process.env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, java));
  for (const candidate of candidates) {
    try {
      await fs.access(candidate, fs.constants.X_OK);
      return await fs.realpath(candidate);
    } catch {
      // next
    }
  }
  return null;
}

/**
 * AppCDS: the first run archives the classes it loaded at exit; later runs map the archive. Nested
 * fat-jar classes cannot be archived, so the classpath must be plain jars. Keyed by JVM build and
 * classpath; a JVM that cannot use it ignores it (-Xshare:auto), so the worst case is a slower start.
 * @param {string} cacheDir
 * @param {string} name
 * @param {string} java
 * @param {string} classpath  as the JVM is given it
 * @returns {Promise<{jvmArgs: string[], createsArchive?: true, commit(): Promise<void>, discard(): void} | null>}
 */
export async function classDataSharing(cacheDir, name, java, classpath) {
  const real = await resolveJava(java);
  if (!real) return null;
  const javaHome = path.dirname(path.dirname(real));
  const fingerprint = [real];
  for (const file of [real, 'lib/modules', 'lib/server/libjvm.so', 'lib/server/classes.jsa']) {
    const stat = await fs.stat(path.resolve(javaHome, file)).catch(() => null);
    fingerprint.push(stat ? `${stat.size}:${Math.trunc(stat.mtimeMs)}` : '-');
  }
  const key = `${JSON.stringify({ java: fingerprint, classpath })}\n`;
  const dir = path.join(cacheDir, 'cds');
  const archive = path.join(dir, `${name}.jsa`);
  const keyFile = `${archive}.key`;
  const pendingPrefix = `${name}.jsa.`;
  await fs.mkdir(dir, { recursive: true });
  for (const file of await fs.readdir(dir)) {
    if (!file.startsWith(pendingPrefix)) continue;
    const match = /^(\d+)-[0-9a-f]+\.tmp$/.exec(file.slice(pendingPrefix.length));
    if (match && !isAlive(Number(match[1]))) await fs.rm(path.join(dir, file), { force: true });
  }
  const current = existsSync(archive) && (await fs.readFile(keyFile, 'utf8').catch(() => '')) === key;
  if (current)
    return { jvmArgs: [`-XX:SharedArchiveFile=${archive}`], commit: async () => {}, discard: () => {} };

  const pending = `${archive}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  return {
    jvmArgs: [`-XX:ArchiveClassesAtExit=${pending}`],
    createsArchive: true,
    /** After a clean exit; rename is atomic, and equal keys mean equal files. */
    commit: async () => {
      const stat = await fs.stat(pending).catch(() => null);
      if (!stat?.size) return;
      await fs.rename(pending, archive);
      await fs.writeFile(keyFile, key);
    },
    discard: () => rmSync(pending, { force: true }),
  };
}

/**
 * stdout and stderr in `logFile` (truncated).
 * @param {string} java
 * @param {string[]} args
 * @param {{ cwd: string, logFile: string }} options
 */
function spawnJava(java, args, { cwd, logFile }) {
  const logFd = openSync(logFile, 'w');
  try {
    return spawn(java, args, { cwd, stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
}

/**
 * An exit hook SIGKILLs the JVM if Node exits without stop(); stop() sends SIGTERM, then SIGKILL
 * after 20 s, keeps the CDS archive only after a clean ready run, and removes `removeOnStop`. Call
 * from the tick that spawned `child`, so its 'error' event is not missed.
 * @param {object} options
 * @param {import('node:child_process').ChildProcess} options.child
 * @param {string} options.label  'Kafka', in log lines
 * @param {string} options.logFile
 * @param {Awaited<ReturnType<typeof classDataSharing>>} options.cds
 * @param {string} [options.removeOnStop]  a folder
 * @param {(message: string) => void} options.log
 */
function superviseJvm({ child, label, logFile, cds, removeOnStop, log }) {
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    removeFolderNow(removeOnStop);
    cds?.discard();
  };
  process.on('exit', onExit);

  /** @type {Error | undefined} */
  let spawnError;
  /** @type {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
  const exited = new Promise((resolve) => {
    child.once('error', (error) => {
      spawnError = error;
      resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const hasExited = () => spawnError || child.exitCode !== null || child.signalCode !== null;

  let ready = false;
  /** @type {Promise<void> | undefined} */
  let stopping;
  const stop = () =>
    (stopping ??= (async () => {
      const stopStarted = Date.now();
      if (!hasExited()) {
        child.kill('SIGTERM');
        const timedOut = Symbol('timeout');
        const timer = new AbortController();
        const result = await Promise.race([
          exited,
          sleep(STOP_TIMEOUT_MS, timedOut, { signal: timer.signal }).catch(() => undefined),
        ]);
        timer.abort(); // a pending timer would keep the caller's process alive for 20 s
        if (result === timedOut && !hasExited()) {
          log(`${label} did not stop within ${STOP_TIMEOUT_MS / 1000} s; killing it`);
          child.kill('SIGKILL');
          await exited;
        }
      }
      process.off('exit', onExit);
      const exit = await exited;
      if (cds?.createsArchive) {
        // Only a JVM that started, answered and stopped cleanly has loaded the classes worth archiving.
        if (!ready || exit.signal === 'SIGKILL' || spawnError) cds.discard();
        else
          await cds
            .commit()
            .catch((/** @type {Error} */ error) =>
              log(`could not keep the class-data archive: ${error.message}`),
            );
      }
      await (removeOnStop ? fs.rm(removeOnStop, { recursive: true, force: true, maxRetries: 3 }) : undefined);
      if (ready) log(`${label} stopped in ${seconds(stopStarted)}`);
    })());

  const readLog = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };

  return {
    child,
    exited,
    stop,
    readLog,
    hasExited,
    get spawnError() {
      return spawnError;
    },
    markReady: () => {
      ready = true;
    },
  };
}

/** For a start that failed before its JVM was supervised. @param {string | undefined} folder */
function removeFolderNow(folder) {
  if (folder) rmSync(folder, { recursive: true, force: true });
}

/**
 * Polls `isReady` until true; when the JVM exits first or the deadline passes, stops it and throws
 * `describeFailure(reason, output)`.
 * @param {ReturnType<typeof superviseJvm>} service
 * @param {object} options
 * @param {string} options.java
 * @param {string} options.role  'broker', in "the broker exited"
 * @param {number} options.started  Date.now() at the start
 * @param {number} options.startTimeoutMs
 * @param {() => Promise<boolean>} options.isReady
 * @param {(reason: string, output: string) => Error} options.describeFailure
 */
async function waitUntilReady(service, { java, role, started, startTimeoutMs, isReady, describeFailure }) {
  const failure = async (/** @type {string} */ reason) => {
    const output = service.readLog();
    await service.stop();
    return describeFailure(reason, output);
  };
  const { child } = service;
  const deadline = started + startTimeoutMs;
  for (;;) {
    if (service.hasExited()) {
      throw await failure(
        service.spawnError
          ? `cannot run ${java}: ${service.spawnError.message}`
          : `the ${role} exited (code ${child.exitCode}, signal ${child.signalCode})`,
      );
    }
    if (await isReady()) {
      service.markReady();
      return;
    }
    if (Date.now() > deadline) {
      throw await failure(`not ready within ${startTimeoutMs / 1000} s`);
    }
    await sleep(200);
  }
}

/**
 * `prepare()` writes the configuration and resolves with the JVM's arguments; a failed preparation
 * or spawn removes `removeOnStop` and the pending CDS archive.
 * @param {object} options
 * @param {string} options.java
 * @param {string} options.cwd
 * @param {string} options.logFile
 * @param {Awaited<ReturnType<typeof classDataSharing>>} options.cds
 * @param {string} [options.removeOnStop]
 * @param {string} options.label
 * @param {string} options.role
 * @param {(message: string) => void} options.log
 * @param {() => Promise<string[]>} options.prepare
 * @param {number} options.started
 * @param {number} options.startTimeoutMs
 * @param {(service: ReturnType<typeof superviseJvm>) => Promise<boolean>} options.isReady
 * @param {(reason: string, output: string, spawnError: Error | undefined) => Error} options.describeFailure
 * @returns {Promise<ReturnType<typeof superviseJvm>>}
 */
export async function launchJvm({
  java,
  cwd,
  logFile,
  cds,
  removeOnStop,
  label,
  role,
  log,
  prepare,
  started,
  startTimeoutMs,
  isReady,
  describeFailure,
}) {
  let child;
  try {
    child = spawnJava(java, await prepare(), { cwd, logFile });
  } catch (error) {
    removeFolderNow(removeOnStop);
    cds?.discard();
    throw error;
  }
  const service = superviseJvm({ child, label, logFile, cds, removeOnStop, log });
  await waitUntilReady(service, {
    java,
    role,
    started,
    startTimeoutMs,
    isReady: () => isReady(service),
    describeFailure: (reason, output) => describeFailure(reason, output, service.spawnError),
  });
  return service;
}

/** `<command> --name value --name=value ...` @param {string[]} argv */
function parseArgs(argv) {
  const [command, ...rest] = argv;
  /** @type {Record<string, string>} */
  const options = {};
  for (let i = 0; i < rest.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(rest[i]);
    if (!match) throw new Error(`unexpected argument: ${rest[i]}`);
    const value = match[2] ?? rest[++i];
    if (value === undefined) throw new Error(`--${match[1]} needs a value`);
    options[match[1]] = value;
  }
  return { command, options };
}

/**
 * @param {string | undefined} value
 * @param {number} fallback
 */
export function toPort(value, fallback) {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`not a port: ${value}`);
  return port;
}

/**
 * Resolves on the first SIGINT or SIGTERM; a second exits at once with 130. Install before starting.
 * @param {string} prefix
 */
function firstStopSignal(prefix) {
  /** @type {NodeJS.Signals | null} */
  let signalled = null;
  /** @type {(value: { signal: NodeJS.Signals }) => void} */
  let resolveSignal = () => {};
  /** @type {Promise<{ signal: NodeJS.Signals }>} */
  const signal = new Promise((resolve) => (resolveSignal = resolve));
  const onSignal = (/** @type {NodeJS.Signals} */ name) => {
    if (signalled) {
      console.error(`${prefix} ${name} again: exiting now`);
      process.exit(130);
    }
    signalled = name;
    resolveSignal({ signal: name });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return signal;
}

/**
 * The `fetch` / `start` command line, run only when `moduleUrl` is Node's main script. `start` runs
 * the service until a signal (a second exits with 130) or until it dies (last output lines, exit 1).
 * @param {string} moduleUrl  import.meta.url
 * @param {object} cli
 * @param {string} cli.prefix  '[kafka]'
 * @param {string} cli.role  'broker'
 * @param {string} cli.defaultVersion
 * @param {string} cli.usage  printed (exit 2) for an unknown command
 * @param {(options: {cacheDir?: string, version: string}) => Promise<string>} cli.fetch  resolves with the line to print
 * @param {(options: {cacheDir?: string, version: string, options: Record<string, string>}) =>
 *   Promise<{service: {logFile: string, exited: Promise<{code: number|null, signal: string|null}>,
 *   stop(): Promise<void>}, line: string}>} cli.start  `line` is printed once the service is ready
 */
export function runServiceCli(moduleUrl, { prefix, role, defaultVersion, usage, fetch, start }) {
  if (!process.argv[1] || path.resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  const main = async () => {
    const { command, options } = parseArgs(process.argv.slice(2));
    const version = options.version ?? defaultVersion;
    const cacheDir = options['cache-dir'];
    if (command === 'fetch') {
      console.log(`${prefix} ${await fetch({ cacheDir, version })}`);
      return 0;
    }
    if (command !== 'start') {
      console.error(usage);
      return 2;
    }

    const signal = firstStopSignal(prefix);
    const { service, line } = await start({ cacheDir, version, options });
    console.log(`${prefix} ${line}`);

    const outcome = await Promise.race([service.exited.then((exit) => ({ exit })), signal]);
    if ('exit' in outcome) {
      const output = existsSync(service.logFile) ? readFileSync(service.logFile, 'utf8') : '';
      console.error(
        `${prefix} the ${role} exited on its own (code ${outcome.exit.code}, signal ${outcome.exit.signal}):\n${tail(output)}`,
      );
      await service.stop();
      return 1;
    }
    await service.stop();
    return 0;
  };
  main().then(
    (code) => process.exit(code),
    (/** @type {Error} */ error) => {
      console.error(`${prefix} ${error.message}`);
      process.exit(1);
    },
  );
}
