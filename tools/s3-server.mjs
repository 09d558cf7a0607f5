// An S3-compatible server for tests (batch exports write to S3), with no Docker and nothing
// installed by hand: Adobe S3Mock (the Spring Boot server, `com.adobe.testing:s3mock`, its runnable
// `exec` jar) is fetched once from Maven Central with the machine's Maven (`mvn`) into a cache folder
// outside the repository, unpacked, and run with the machine's Java (17 or newer) on loopback, plain
// HTTP, with its objects in a temp folder.
//
// Library (plain Node ESM, built-ins only):
//   import { ensureS3MockJar, startS3Server } from './s3-server.mjs';
//   const jar = await ensureS3MockJar({ log });          // fetches once, then instant
//   const s3 = await startS3Server({ port: 0, log });    // port 0: a free port is picked
//   process.env.S3_ENDPOINT = s3.endpoint;               // 'http://127.0.0.1:<port>'
//   await s3.stop();
//
// Clients must use path-style addressing (`forcePathStyle: true` in the AWS SDK); any credentials
// and region are accepted (S3Mock does not check signatures).
//
// Command line:
//   node tools/s3-server.mjs fetch    fetch the server into the cache (once) and print where
//   node tools/s3-server.mjs start    run a server on http://127.0.0.1:9090 in the foreground until
//                                     Ctrl-C; options: --port N, --data-dir DIR (s3mock.log and the
//                                     objects, kept across restarts; default: a temp folder)
//
// Start-up speed: the first server that starts and stops cleanly leaves a class-data-sharing
// archive (AppCDS, ~50 MB) in the cache; later starts map it and are about twice as fast.
//
// Environment: XDG_CACHE_HOME (the cache goes to ${XDG_CACHE_HOME:-~/.cache}/hogbase/s3mock-<v>),
// JAVA_HOME (else `java` from PATH), and Maven's own settings (~/.m2/settings.xml, MAVEN_OPTS).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/**
 * Pinned, so every machine runs the same server: the newest 4.x (Spring Boot 3.5, Java 17).
 * TRICKY: 5.0.0 to 5.2.0 (the newest) run on Java 17 too, but break multipart uploads from the
 * JavaScript SDK: for an UploadPart that carries both `x-amz-sdk-checksum-algorithm` and the
 * `x-amz-checksum-crc32` value (what the SDK sends for every part by default) they ignore the value,
 * answer without a part checksum, and then refuse CompleteMultipartUpload ("The upload was created
 * using a crc32 checksum. The complete request must include the checksum for each part"), so every
 * `@aws-sdk/lib-storage` Upload over 5 MB fails. 4.x takes the header's value and answers with it.
 */
export const S3MOCK_VERSION = '4.12.4';
const MAVEN_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
const MARKER_FILE = '.complete.json';
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;

function defaultLog(message) {
  console.log(`[s3] ${message}`);
}

/** `${XDG_CACHE_HOME:-~/.cache}/hogbase/s3mock-<version>`. */
export function defaultCacheDir(version = S3MOCK_VERSION) {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'hogbase', `s3mock-${version}`);
}

function seconds(since) {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

function tail(text, lines = 60) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function javaBinary() {
  return process.env.JAVA_HOME ? path.join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

const JAVA_HINT =
  'S3Mock needs Java 17 or newer: install a JDK (apt-get install openjdk-17-jre-headless) or set JAVA_HOME';

/** The real path of the java that `javaBinary()` runs, or null when it cannot be found. */
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

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Class-data sharing (AppCDS), as tools/kafka-broker.mjs does it: the first server run dumps the
 * classes it loaded into an archive in the cache when it exits (-XX:ArchiveClassesAtExit); later
 * runs map it (-XX:SharedArchiveFile). This is why the fetch unpacks the Spring Boot jar: classes
 * loaded from jars nested in a fat jar cannot be archived. The archive belongs to one JVM build and
 * one classpath and is keyed by both; a JVM that cannot use it ignores it (-Xshare:auto), so the
 * worst case is a slower start.
 */
async function classDataSharing(cacheDir, java, classpath) {
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
  const archive = path.join(dir, 's3mock.jsa');
  const keyFile = `${archive}.key`;
  await fs.mkdir(dir, { recursive: true });
  for (const name of await fs.readdir(dir)) {
    const match = /^s3mock\.jsa\.(\d+)-[0-9a-f]+\.tmp$/.exec(name);
    if (match && !isAlive(Number(match[1]))) await fs.rm(path.join(dir, name), { force: true });
  }
  const current = existsSync(archive) && (await fs.readFile(keyFile, 'utf8').catch(() => '')) === key;
  if (current)
    return { jvmArgs: [`-XX:SharedArchiveFile=${archive}`], commit: async () => {}, discard: () => {} };

  const pending = `${archive}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  return {
    jvmArgs: [`-XX:ArchiveClassesAtExit=${pending}`],
    createsArchive: true,
    /** After a clean exit: put the new archive in place (rename is atomic; equal keys, equal files). */
    commit: async () => {
      const stat = await fs.stat(pending).catch(() => null);
      if (!stat?.size) return;
      await fs.rename(pending, archive);
      await fs.writeFile(keyFile, key);
    },
    discard: () => rmSync(pending, { force: true }),
  };
}

/** Runs a command to completion with its output captured; resolves with the exit code. */
function run(command, args, { cwd, hint } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
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

// ---------------------------------------------------------------------------------------------
// Jar
// ---------------------------------------------------------------------------------------------

/** The unpacked launcher jar recorded by a complete fetch, or null when absent or incomplete. */
function readCompleteJar(cacheDir, version) {
  try {
    const marker = JSON.parse(readFileSync(path.join(cacheDir, MARKER_FILE), 'utf8'));
    if (marker.version !== version || typeof marker.jar !== 'string' || !Array.isArray(marker.libs)) {
      return null;
    }
    const jar = path.join(cacheDir, marker.jar);
    const libs = marker.libs.map((lib) => path.join(path.dirname(jar), 'lib', lib));
    return existsSync(jar) && libs.length > 0 && libs.every((lib) => existsSync(lib)) ? jar : null;
  } catch {
    return null;
  }
}

/** Removes staging folders left by fetches that were interrupted (their process is gone). */
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
 * Returns the path of S3Mock's unpacked launcher jar (its dependencies in `lib/` beside it), fetching
 * `com.adobe.testing:s3mock:<version>:jar:exec` with Maven and unpacking it the first time.
 *
 * The fetch goes to a staging folder beside the cache folder and is renamed into place only once
 * complete (with a marker), so an interrupted fetch never leaves a half cache and two concurrent
 * fetches do not corrupt each other.
 */
export async function ensureS3MockJar({ cacheDir, version = S3MOCK_VERSION, log = defaultLog } = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  const parent = path.dirname(cacheDir);
  const base = path.basename(cacheDir);
  const cached = readCompleteJar(cacheDir, version);
  if (cached) {
    await removeStaleStaging(parent, base);
    return cached;
  }

  await fs.mkdir(parent, { recursive: true });
  await removeStaleStaging(parent, base);

  const staging = path.join(parent, `${base}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  const started = Date.now();
  log(`fetching S3Mock ${version} with Maven into ${cacheDir} (once; may take a minute)`);
  try {
    const download = path.join(staging, 'download');
    await fs.mkdir(download, { recursive: true });
    // cwd: the empty staging folder, so Maven runs without a project (a pom.xml in the caller's
    // folder would otherwise be read).
    const fetched = await run(
      'mvn',
      [
        '-B',
        '-q',
        `${MAVEN_DEPENDENCY_PLUGIN}:copy`,
        `-Dartifact=com.adobe.testing:s3mock:${version}:jar:exec`,
        `-DoutputDirectory=${download}`,
      ],
      { cwd: staging, hint: 'Maven is needed once to fetch S3Mock: apt-get install maven' },
    );
    if (fetched.code !== 0) {
      throw new Error(
        `mvn could not fetch S3Mock ${version} (exit ${fetched.code}):\n${tail(fetched.output, 40)}`,
      );
    }
    const fatJar = path.join(download, `s3mock-${version}-exec.jar`);
    if (!existsSync(fatJar)) {
      throw new Error(`the S3Mock ${version} fetch has no ${path.basename(fatJar)}`);
    }

    // Spring Boot's own unpacking: a thin launcher jar whose manifest lists lib/*.jar.
    const unpacked = await run(
      javaBinary(),
      ['-Djarmode=tools', '-jar', fatJar, 'extract', '--destination', path.join(staging, 'app')],
      { cwd: staging, hint: JAVA_HINT },
    );
    if (unpacked.code !== 0) {
      const versionHint = /UnsupportedClassVersionError/.test(unpacked.output) ? `\n${JAVA_HINT}` : '';
      throw new Error(
        `unpacking S3Mock ${version} failed (exit ${unpacked.code}):\n${tail(unpacked.output, 40)}${versionHint}`,
      );
    }
    // Maven's local repository keeps the download; the cache keeps only what runs.
    await fs.rm(download, { recursive: true, force: true });
    const jar = path.join('app', path.basename(fatJar));
    const libs = (await fs.readdir(path.join(staging, 'app', 'lib')))
      .filter((f) => f.endsWith('.jar'))
      .sort();
    if (!existsSync(path.join(staging, jar)) || libs.length === 0) {
      throw new Error(`unpacking S3Mock ${version} left no ${jar} with a lib/ folder`);
    }
    await fs.writeFile(
      path.join(staging, MARKER_FILE),
      `${JSON.stringify({ version, fetchedAt: new Date().toISOString(), jar, libs }, null, 2)}\n`,
    );

    // Commit: a folder without a valid marker (an older layout, a manual copy) is replaced.
    if (existsSync(cacheDir) && !readCompleteJar(cacheDir, version)) {
      await fs.rm(cacheDir, { recursive: true, force: true });
    }
    try {
      await fs.rename(staging, cacheDir);
    } catch (error) {
      // Another process committed the same fetch first: use theirs.
      if (!readCompleteJar(cacheDir, version)) throw error;
      await fs.rm(staging, { recursive: true, force: true });
    }
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    throw error;
  }
  const jar = readCompleteJar(cacheDir, version);
  if (!jar) throw new Error(`the S3Mock cache ${cacheDir} is incomplete after the fetch`);
  log(`fetched S3Mock ${version} in ${seconds(started)}`);
  return jar;
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

/** Resolves with a port that was free a moment ago on 127.0.0.1 (0 picks one). */
function probePort(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const { port: bound } = server.address();
      server.close(() => resolve(bound));
    });
  });
}

async function choosePort(port) {
  try {
    return await probePort(port);
  } catch (error) {
    throw new Error(
      `cannot start S3Mock: 127.0.0.1:${port} is not free (${error.code ?? error.message}); ` +
        'is another server running? Pass port 0 to pick a free port.',
      { cause: error },
    );
  }
}

/**
 * One unsigned S3 ListBuckets (`GET /`) on a fresh connection; resolves true when the server answers
 * 200 with a ListAllMyBucketsResult, false on any failure. Proves S3 is served, not just HTTP: the
 * store is created lazily on this first request.
 */
function listBucketsAnswers(port, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (ok) => {
      if (settled) return;
      settled = true;
      request.destroy();
      resolve(ok);
    };
    const request = http.get(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        agent: false,
        headers: { connection: 'close' },
        timeout: timeoutMs,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () =>
          finish(response.statusCode === 200 && body.includes('ListAllMyBucketsResult')),
        );
        response.on('error', () => finish(false));
      },
    );
    request.on('timeout', () => finish(false));
    request.on('error', () => finish(false));
  });
}

/**
 * A Spring bean file read through `spring.main.sources`.
 *
 * TRICKY: S3Mock always adds a second plain-HTTP Tomcat connector (its `httpPort`) with no address,
 * so it would listen on every interface; `server.address` binds only the main connector. This bean
 * sets the extra connector's address to loopback while the context starts: Spring Boot binds
 * connectors only once every bean exists, and `lazy-init="false"` beats S3Mock's global lazy
 * initialization. The main connector, TLS off, is the endpoint; the extra one is unused.
 */
function loopbackConnectorXml() {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by tools/s3-server.mjs: S3Mock's extra HTTP connector, on loopback only. -->
<beans xmlns="http://www.springframework.org/schema/beans"
       xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xsi:schemaLocation="http://www.springframework.org/schema/beans https://www.springframework.org/schema/beans/spring-beans.xsd">
  <bean id="hogbaseLoopbackHttpConnector" class="org.springframework.beans.factory.config.MethodInvokingBean" lazy-init="false">
    <property name="targetObject" value="#{@webServerFactory.additionalTomcatConnectors[0]}"/>
    <property name="targetMethod" value="setProperty"/>
    <property name="arguments"><list><value>address</value><value>127.0.0.1</value></list></property>
  </bean>
</beans>
`;
}

/**
 * Starts S3Mock on http://127.0.0.1:<port> and resolves once it answers an S3 ListBuckets.
 *
 * @param {object} [options]
 * @param {string} [options.cacheDir]  the server cache (default: defaultCacheDir(version))
 * @param {string} [options.version]   S3Mock version (default: S3MOCK_VERSION)
 * @param {string} [options.dataDir]   folder for s3mock.log, the JVM's temp files and the objects
 *   (store/); default: a temp folder removed by stop(). A given folder is kept, objects included.
 * @param {number} [options.port]      HTTP port; 0 (default) picks a free one
 * @param {string[]} [options.jvmArgs]  default ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC']
 * @param {boolean} [options.classDataSharing]  keep an AppCDS archive in the cache (default true)
 * @param {number} [options.startTimeoutMs]  default 90 s
 * @param {(message: string) => void} [options.log]
 * @returns {Promise<{endpoint: string, port: number, pid: number, dataDir: string, logFile: string,
 *   exited: Promise<{code: number|null, signal: string|null}>, stop(): Promise<void>}>}
 */
export async function startS3Server({
  cacheDir,
  version = S3MOCK_VERSION,
  dataDir,
  port = 0,
  // C1 only and the serial collector: a test server handles little traffic, and both halve the
  // JVM's start-up work on a 2-core machine.
  jvmArgs = ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'],
  classDataSharing: useCds = true,
  startTimeoutMs = START_TIMEOUT_MS,
  log = defaultLog,
} = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  const jar = await ensureS3MockJar({ cacheDir, version, log });
  const started = Date.now();

  port = await choosePort(port);

  let removeOnStop;
  if (dataDir) {
    dataDir = path.resolve(dataDir);
    await fs.mkdir(dataDir, { recursive: true });
  } else {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'hogbase-s3-'));
    removeOnStop = dataDir;
  }
  const cleanUp = () => (removeOnStop ? rmSync(removeOnStop, { recursive: true, force: true }) : undefined);

  const storeDir = path.join(dataDir, 'store');
  const tmpDir = path.join(dataDir, 'tmp');
  const beansFile = path.join(dataDir, 'loopback-connector.xml');
  const logFile = path.join(dataDir, 's3mock.log');
  const java = javaBinary();
  const cds = useCds ? await classDataSharing(cacheDir, java, jar).catch(() => null) : null;

  let child;
  try {
    await fs.mkdir(storeDir, { recursive: true });
    await fs.mkdir(tmpDir, { recursive: true });
    await fs.writeFile(beansFile, loopbackConnectorXml());
    const logFd = openSync(logFile, 'w');
    try {
      child = spawn(
        java,
        [
          '-XX:+ExitOnOutOfMemoryError',
          '-Djava.awt.headless=true',
          // Tomcat's work folders go here, so a killed server leaves nothing in the system temp.
          `-Djava.io.tmpdir=${tmpDir}`,
          ...(cds?.jvmArgs ?? []),
          ...jvmArgs,
          '-jar',
          jar,
          '--server.address=127.0.0.1',
          `--server.port=${port}`,
          '--server.ssl.enabled=false',
          '--com.adobe.testing.s3mock.httpPort=0',
          `--spring.main.sources=file:${beansFile}`,
          '--spring.main.banner-mode=off',
          `--com.adobe.testing.s3mock.store.root=${storeDir}`,
          `--com.adobe.testing.s3mock.store.retain-files-on-exit=${removeOnStop ? 'false' : 'true'}`,
        ],
        { cwd: dataDir, stdio: ['ignore', logFd, logFd] },
      );
    } finally {
      closeSync(logFd);
    }
  } catch (error) {
    cleanUp();
    cds?.discard();
    throw error;
  }

  // Last resort if this Node process exits without stop(): do not leave a server behind.
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    cleanUp();
    cds?.discard();
  };
  process.on('exit', onExit);

  let spawnError;
  const exited = new Promise((resolve) => {
    child.once('error', (error) => {
      spawnError = error;
      resolve({ code: null, signal: null });
    });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const hasExited = () => spawnError || child.exitCode !== null || child.signalCode !== null;

  let ready = false;
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
          log(`S3Mock did not stop within ${STOP_TIMEOUT_MS / 1000} s; killing it`);
          child.kill('SIGKILL');
          await exited;
        }
      }
      process.off('exit', onExit);
      const exit = await exited;
      if (cds?.createsArchive) {
        // Only a server that started, answered and stopped cleanly has loaded the classes worth archiving.
        if (!ready || exit.signal === 'SIGKILL' || spawnError) cds.discard();
        else
          await cds.commit().catch((error) => log(`could not keep the class-data archive: ${error.message}`));
      }
      await (removeOnStop ? fs.rm(removeOnStop, { recursive: true, force: true, maxRetries: 3 }) : undefined);
      if (ready) log(`S3Mock stopped in ${seconds(stopStarted)}`);
    })());

  const readLog = () => {
    try {
      return readFileSync(logFile, 'utf8');
    } catch {
      return '';
    }
  };
  const failure = async (reason) => {
    const output = readLog();
    await stop();
    const versionHint = spawnError || /UnsupportedClassVersionError/.test(output) ? `\n${JAVA_HINT}` : '';
    return new Error(
      `S3Mock ${version} did not start: ${reason}\n--- last lines of the server output ---\n${tail(output)}${versionHint}`,
    );
  };
  const deadline = started + startTimeoutMs;
  for (;;) {
    if (hasExited()) {
      throw await failure(
        spawnError
          ? `cannot run ${java}: ${spawnError.message}`
          : `the server exited (code ${child.exitCode}, signal ${child.signalCode})`,
      );
    }
    if (await listBucketsAnswers(port)) {
      ready = true;
      break;
    }
    if (Date.now() > deadline) {
      throw await failure(`not ready within ${startTimeoutMs / 1000} s`);
    }
    await sleep(200);
  }
  log(`S3Mock ${version} ready on http://127.0.0.1:${port} in ${seconds(started)}`);

  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    pid: child.pid,
    dataDir,
    logFile,
    exited,
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------------------------

function parseArgs(argv) {
  const [command, ...rest] = argv;
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

function toPort(value, fallback) {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`not a port: ${value}`);
  return port;
}

async function main() {
  const { command, options } = parseArgs(process.argv.slice(2));
  const version = options.version ?? S3MOCK_VERSION;
  const cacheDir = options['cache-dir'];
  if (command === 'fetch') {
    const jar = await ensureS3MockJar({ cacheDir, version });
    console.log(`[s3] S3Mock ${version} in ${path.dirname(jar)}`);
    return 0;
  }
  if (command !== 'start') {
    console.error(
      'usage: node tools/s3-server.mjs fetch [--version V] [--cache-dir DIR]\n' +
        '       node tools/s3-server.mjs start [--port 9090] [--data-dir DIR] [--version V]',
    );
    return 2;
  }

  let signalled = null;
  let resolveSignal;
  const signal = new Promise((resolve) => (resolveSignal = resolve));
  const onSignal = (name) => {
    if (signalled) {
      console.error(`[s3] ${name} again: exiting now`);
      process.exit(130);
    }
    signalled = name;
    resolveSignal({ signal: name });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const server = await startS3Server({
    cacheDir,
    version,
    port: toPort(options.port, 9090),
    dataDir: options['data-dir'],
  });
  console.log(`[s3] S3_ENDPOINT=${server.endpoint}  (server output: ${server.logFile}); Ctrl-C to stop`);

  // Run until a signal, or until the server dies on its own.
  const outcome = await Promise.race([server.exited.then((exit) => ({ exit })), signal]);
  if (outcome.exit) {
    const output = existsSync(server.logFile) ? readFileSync(server.logFile, 'utf8') : '';
    console.error(
      `[s3] the server exited on its own (code ${outcome.exit.code}, signal ${outcome.exit.signal}):\n${tail(output)}`,
    );
    await server.stop();
    return 1;
  }
  await server.stop();
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      console.error(`[s3] ${error.message}`);
      process.exit(1);
    },
  );
}
