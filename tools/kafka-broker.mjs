// A real Apache Kafka broker for tests and for split mode on one machine, with no Docker and
// nothing installed by hand: the official Kafka jars are fetched once from Maven Central with the
// machine's Maven (`mvn`) into a cache folder outside the repository, and run with the machine's
// Java (17 or newer) as a single KRaft node (broker and controller in one process) on loopback.
//
// Library (plain Node ESM, built-ins only):
//   import { ensureKafkaJars, startKafkaBroker } from './kafka-broker.mjs';
//   const classpath = await ensureKafkaJars({ log });          // fetches once, then instant
//   const kafka = await startKafkaBroker({ port: 0, log });    // port 0: free ports are picked
//   process.env.KAFKA_BROKERS = kafka.brokers;                 // '127.0.0.1:<port>'
//   await kafka.stop();
//
// Command line:
//   node tools/kafka-broker.mjs fetch    fetch the jars into the cache (once) and print where
//   node tools/kafka-broker.mjs start    run a broker on 127.0.0.1:9092 (controller 9093) in the
//                                        foreground until Ctrl-C; options: --port N,
//                                        --controller-port N, --data-dir DIR (config and kafka.log;
//                                        default: a temp folder), --log-dir DIR (keep the topics'
//                                        data there across restarts; default: fresh per start)
//
// Start-up speed: the first broker that starts and stops cleanly leaves a class-data-sharing
// archive (AppCDS, ~50 MB) in the jar cache; later starts map it and are about twice as fast.
//
// Environment: XDG_CACHE_HOME (the cache goes to ${XDG_CACHE_HOME:-~/.cache}/hogbase/kafka-<v>),
// JAVA_HOME (else `java` from PATH), and Maven's own settings (~/.m2/settings.xml, MAVEN_OPTS).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/**
 * Pinned, so every machine runs the same broker. It is the newest Kafka 4 whose artifacts all
 * resolve on Maven Central: 4.4.0's `kafka_2.13` is published but its dependency
 * `kafka-tools-api:4.4.0` is not (and its poms leak test dependencies), so 4.4.0 cannot be fetched.
 */
export const KAFKA_VERSION = '4.3.1';
/** SLF4J 1.x -> Log4j 2 binding; Kafka 4 ships Log4j 2 (log4j-core) but the binding only in its tarball. */
const LOG4J_VERSION = '2.25.4';
const MAVEN_DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';
const MARKER_FILE = '.complete.json';
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;
const STARTED_LINE = /Kafka Server started|\bstarted \(kafka\.server/;

function defaultLog(message) {
  console.log(`[kafka] ${message}`);
}

/** `${XDG_CACHE_HOME:-~/.cache}/hogbase/kafka-<version>`. */
export function defaultCacheDir(version = KAFKA_VERSION) {
  const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'hogbase', `kafka-${version}`);
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

/**
 * Class-data sharing (AppCDS): the first broker run dumps the classes it loaded into an archive in
 * the jar cache when it exits (-XX:ArchiveClassesAtExit); later runs map it (-XX:SharedArchiveFile)
 * and start about twice as fast. The archive belongs to one JVM build and one classpath: it is
 * keyed by both, and a JVM that cannot use it ignores it silently (the default -Xshare:auto), so
 * the worst case is a slower start.
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
  const archive = path.join(dir, 'broker.jsa');
  const keyFile = `${archive}.key`;
  await fs.mkdir(dir, { recursive: true });
  for (const name of await fs.readdir(dir)) {
    const match = /^broker\.jsa\.(\d+)-[0-9a-f]+\.tmp$/.exec(name);
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
// Jars
// ---------------------------------------------------------------------------------------------

function pomXml(version) {
  // Exclusions: some Kafka 4 poms list test-only libraries (Mockito, JUnit, ApacheDS) as runtime
  // dependencies; a broker needs none of them.
  const exclusions = [
    ['org.mockito', '*'],
    ['org.junit.jupiter', '*'],
    ['org.junit.platform', '*'],
    ['org.apache.directory.api', '*'],
    ['org.apache.directory.server', '*'],
  ]
    .map(([g, a]) => `<exclusion><groupId>${g}</groupId><artifactId>${a}</artifactId></exclusion>`)
    .join('\n        ');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by tools/kafka-broker.mjs: the runtime classpath of an Apache Kafka ${version} broker. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.hogbase</groupId>
  <artifactId>kafka-broker-runtime</artifactId>
  <version>${version}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>${version}</version>
      <exclusions>
        ${exclusions}
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;
}

/** The classpath recorded by a complete fetch, or null when the folder is absent or incomplete. */
function readCompleteClasspath(cacheDir, version) {
  try {
    const marker = JSON.parse(readFileSync(path.join(cacheDir, MARKER_FILE), 'utf8'));
    if (marker.version !== version || !Array.isArray(marker.jars) || marker.jars.length === 0) {
      return null;
    }
    const jars = marker.jars.map((jar) => path.join(cacheDir, 'libs', jar));
    return jars.every((jar) => existsSync(jar)) ? jars : null;
  } catch {
    return null;
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
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
 * Returns the classpath (absolute jar paths) of an Apache Kafka broker, fetching
 * `org.apache.kafka:kafka_2.13:<version>` and its runtime dependencies with Maven the first time.
 *
 * The fetch goes to a staging folder beside the cache folder and is renamed into place only once
 * complete (with a marker listing the jars), so an interrupted fetch never leaves a half cache and
 * two concurrent fetches do not corrupt each other.
 */
export async function ensureKafkaJars({ cacheDir, version = KAFKA_VERSION, log = defaultLog } = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  const parent = path.dirname(cacheDir);
  const base = path.basename(cacheDir);
  const cached = readCompleteClasspath(cacheDir, version);
  if (cached) {
    await removeStaleStaging(parent, base);
    return cached;
  }

  await fs.mkdir(parent, { recursive: true });
  await removeStaleStaging(parent, base);

  const staging = path.join(parent, `${base}.partial-${process.pid}-${randomBytes(4).toString('hex')}`);
  const started = Date.now();
  log(`fetching Apache Kafka ${version} jars with Maven into ${cacheDir} (once; may take minutes)`);
  try {
    await fs.mkdir(path.join(staging, 'libs'), { recursive: true });
    await fs.writeFile(path.join(staging, 'pom.xml'), pomXml(version));
    const args = [
      '-B',
      '-q',
      '-f',
      path.join(staging, 'pom.xml'),
      `${MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`,
      '-DincludeScope=runtime',
      '-Dmdep.prependGroupId=true',
      `-DoutputDirectory=${path.join(staging, 'libs')}`,
    ];
    const result = await run('mvn', args, {
      cwd: staging,
      hint: 'Maven is needed once to fetch the Kafka jars: apt-get install maven',
    });
    if (result.code !== 0) {
      throw new Error(
        `mvn could not fetch Apache Kafka ${version} (exit ${result.code}):\n${tail(result.output, 40)}`,
      );
    }
    const jars = (await fs.readdir(path.join(staging, 'libs'))).filter((f) => f.endsWith('.jar')).sort();
    for (const required of [
      `org.apache.kafka.kafka_2.13-${version}.jar`,
      `org.apache.kafka.kafka-server-${version}.jar`,
      `org.apache.logging.log4j.log4j-slf4j-impl-${LOG4J_VERSION}.jar`,
    ]) {
      if (!jars.includes(required)) {
        throw new Error(`the Kafka ${version} fetch has no ${required} (got: ${jars.join(', ')})`);
      }
    }
    await fs.writeFile(
      path.join(staging, MARKER_FILE),
      `${JSON.stringify({ version, log4j: LOG4J_VERSION, fetchedAt: new Date().toISOString(), jars }, null, 2)}\n`,
    );

    // Commit: a folder without a valid marker (an older layout, a manual copy) is replaced.
    if (existsSync(cacheDir) && !readCompleteClasspath(cacheDir, version)) {
      await fs.rm(cacheDir, { recursive: true, force: true });
    }
    try {
      await fs.rename(staging, cacheDir);
    } catch (error) {
      // Another process committed the same fetch first: use theirs.
      if (!readCompleteClasspath(cacheDir, version)) throw error;
      await fs.rm(staging, { recursive: true, force: true });
    }
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    throw error;
  }
  const classpath = readCompleteClasspath(cacheDir, version);
  if (!classpath) throw new Error(`the Kafka jar cache ${cacheDir} is incomplete after the fetch`);
  log(`fetched ${classpath.length} jars in ${seconds(started)}`);
  return classpath;
}

// ---------------------------------------------------------------------------------------------
// Broker
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

async function choosePort(port, what, avoid) {
  if (port === 0) {
    for (;;) {
      const free = await probePort(0);
      if (free !== avoid) return free;
    }
  }
  try {
    return await probePort(port);
  } catch (error) {
    throw new Error(
      `cannot start Kafka: 127.0.0.1:${port} (${what}) is not free (${error.code ?? error.message}); ` +
        'is another broker running? Pass port 0 to pick free ports.',
      { cause: error },
    );
  }
}

/**
 * One Kafka ApiVersions (v0) request on a fresh connection; resolves true when the broker answers
 * without error, false on any failure. Proves the broker serves the Kafka protocol, not just TCP.
 */
function apiVersionsAnswers(port, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    const clientId = Buffer.from('hogbase-kafka-probe');
    const correlationId = randomBytes(4).readInt32BE(0);
    const request = Buffer.alloc(4 + 10 + clientId.length);
    request.writeInt32BE(10 + clientId.length, 0); // size
    request.writeInt16BE(18, 4); // api_key: ApiVersions
    request.writeInt16BE(0, 6); // api_version 0 (every broker answers it)
    request.writeInt32BE(correlationId, 8);
    request.writeInt16BE(clientId.length, 12);
    clientId.copy(request, 14);

    let settled = false;
    let received = Buffer.alloc(0);
    const socket = net.createConnection({ host: '127.0.0.1', port });
    const finish = (ok) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('close', () => finish(false));
    socket.once('connect', () => socket.write(request));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4 || received.length < 4 + received.readInt32BE(0)) return;
      // correlation_id int32, error_code int16, api_versions array (int32 count, ...)
      finish(
        received.length >= 14 &&
          received.readInt32BE(4) === correlationId &&
          received.readInt16BE(8) === 0 &&
          received.readInt32BE(10) > 0,
      );
    });
  });
}

function serverProperties({ port, controllerPort, logDir, overrides }) {
  const properties = {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': logDir,
    'num.partitions': '1',
    'default.replication.factor': '1',
    'min.insync.replicas': '1',
    // The app's migrate step creates topics; a typo must fail, not create a topic.
    'auto.create.topics.enable': 'false',
    // One node: internal topics need replication factor 1 or consumer groups never find a
    // coordinator. Few partitions so that the first group/transaction is quick to set up.
    'offsets.topic.replication.factor': '1',
    'offsets.topic.num.partitions': '1',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'transaction.state.log.num.partitions': '1',
    'share.coordinator.state.topic.replication.factor': '1',
    'share.coordinator.state.topic.min.isr': '1',
    'share.coordinator.state.topic.num.partitions': '1',
    'group.initial.rebalance.delay.ms': '0',
    ...overrides,
  };
  return `${Object.entries(properties)
    .map(([key, value]) => `${key}=${String(value).replaceAll('\\', '\\\\')}`)
    .join('\n')}\n`;
}

function log4jProperties(level) {
  return `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = ${level}
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
`;
}

/**
 * Starts a single-node KRaft Kafka broker (broker and controller in one JVM) on 127.0.0.1 and
 * resolves once it answers a Kafka protocol request.
 *
 * @param {object} [options]
 * @param {string} [options.cacheDir]  the jar cache (default: defaultCacheDir(version))
 * @param {string} [options.version]   Kafka version (default: KAFKA_VERSION)
 * @param {string} [options.dataDir]   folder for server.properties and kafka.log (the broker's
 *   output); default: a temp folder removed by stop(). A given folder is kept.
 * @param {string} [options.logDir]    Kafka's data (log.dirs), kept across starts; default: a fresh
 *   temp folder inside dataDir, removed by stop()
 * @param {number} [options.port]            PLAINTEXT port; 0 (default) picks a free one
 * @param {number} [options.controllerPort]  CONTROLLER port; 0 (default) picks a free one
 * @param {Record<string, string|number|boolean>} [options.overrides]  extra server.properties
 * @param {string[]} [options.jvmArgs]  default ['-Xms256m', '-Xmx512m']
 * @param {boolean} [options.classDataSharing]  keep an AppCDS archive in the jar cache (default true)
 * @param {number} [options.startTimeoutMs]  default 90 s
 * @param {(message: string) => void} [options.log]
 * @returns {Promise<{brokers: string, port: number, controllerPort: number, pid: number,
 *   dataDir: string, logFile: string, exited: Promise<{code: number|null, signal: string|null}>,
 *   stop(): Promise<void>}>}
 */
export async function startKafkaBroker({
  cacheDir,
  version = KAFKA_VERSION,
  dataDir,
  logDir,
  port = 0,
  controllerPort = 0,
  overrides = {},
  jvmArgs = ['-Xms256m', '-Xmx512m'],
  classDataSharing: useCds = true,
  startTimeoutMs = START_TIMEOUT_MS,
  log = defaultLog,
} = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  const classpath = (await ensureKafkaJars({ cacheDir, version, log })).join(path.delimiter);
  const started = Date.now();

  port = await choosePort(port, 'broker port', undefined);
  controllerPort = await choosePort(controllerPort, 'controller port', port);

  // What stop() removes: the whole data dir when we made it, else only the fresh log dir.
  let removeOnStop;
  if (dataDir) {
    dataDir = path.resolve(dataDir);
    await fs.mkdir(dataDir, { recursive: true });
  } else {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'hogbase-kafka-'));
    removeOnStop = dataDir;
  }
  if (logDir) {
    logDir = path.resolve(logDir);
    await fs.mkdir(logDir, { recursive: true });
  } else {
    logDir = await fs.mkdtemp(path.join(dataDir, 'kraft-'));
    removeOnStop ??= logDir;
  }
  const cleanUp = () => (removeOnStop ? rmSync(removeOnStop, { recursive: true, force: true }) : undefined);

  const configFile = path.join(dataDir, 'server.properties');
  const log4jFile = path.join(dataDir, 'log4j2.properties');
  const toolLog4jFile = path.join(dataDir, 'log4j2-tools.properties');
  const logFile = path.join(dataDir, 'kafka.log');
  const java = javaBinary();
  const cds = useCds ? await classDataSharing(cacheDir, java, classpath).catch(() => null) : null;
  const javaHint =
    'Kafka needs Java 17 or newer: install a JDK (apt-get install openjdk-17-jre-headless) or set JAVA_HOME';

  let child;
  let formatTook = '';
  try {
    await fs.writeFile(configFile, serverProperties({ port, controllerPort, logDir, overrides }));
    await fs.writeFile(log4jFile, log4jProperties('INFO'));
    await fs.writeFile(toolLog4jFile, log4jProperties('WARN'));

    // Format the KRaft storage (static quorum: controller.quorum.voters, so no --standalone).
    if (!existsSync(path.join(logDir, 'meta.properties'))) {
      const formatStarted = Date.now();
      const clusterId = randomBytes(16).toString('base64url');
      const format = await run(
        java,
        [
          '-Xmx256m',
          '-XX:TieredStopAtLevel=1',
          '-XX:+UseSerialGC',
          ...(cds && !cds.createsArchive ? cds.jvmArgs : []),
          `-Dlog4j2.configurationFile=${toolLog4jFile}`,
          '-cp',
          classpath,
          'kafka.tools.StorageTool',
          'format',
          '--ignore-formatted',
          // One argument: a base64url id may start with '-', which the parser would take for an option.
          `--cluster-id=${clusterId}`,
          '--config',
          configFile,
        ],
        { cwd: dataDir, hint: javaHint },
      );
      if (format.code !== 0) {
        const versionHint = /UnsupportedClassVersionError/.test(format.output) ? `\n${javaHint}` : '';
        throw new Error(
          `formatting Kafka storage failed (exit ${format.code}):\n${tail(format.output, 40)}${versionHint}`,
        );
      }
      formatTook = ` (storage format ${seconds(formatStarted)})`;
    }

    const logFd = openSync(logFile, 'w');
    try {
      child = spawn(
        java,
        [
          // Kafka's own defaults (kafka-run-class.sh), then the caller's, which win.
          '-XX:+UseG1GC',
          '-XX:MaxGCPauseMillis=20',
          '-XX:InitiatingHeapOccupancyPercent=35',
          '-XX:+ExitOnOutOfMemoryError',
          '-Djava.awt.headless=true',
          ...(cds?.jvmArgs ?? []),
          ...jvmArgs,
          `-Dlog4j2.configurationFile=${log4jFile}`,
          '-cp',
          classpath,
          'kafka.Kafka',
          configFile,
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

  // Last resort if this Node process exits without stop(): do not leave a broker behind.
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
          log(`Kafka did not stop within ${STOP_TIMEOUT_MS / 1000} s; killing it`);
          child.kill('SIGKILL');
          await exited;
        }
      }
      process.off('exit', onExit);
      const exit = await exited;
      if (cds?.createsArchive) {
        // Only a broker that started and stopped cleanly has loaded the classes worth archiving.
        if (!ready || exit.signal === 'SIGKILL' || spawnError) cds.discard();
        else
          await cds.commit().catch((error) => log(`could not keep the class-data archive: ${error.message}`));
      }
      await (removeOnStop ? fs.rm(removeOnStop, { recursive: true, force: true, maxRetries: 3 }) : undefined);
      if (ready) log(`Kafka stopped in ${seconds(stopStarted)}`);
    })());

  // Wait for the started line, then for a real Kafka protocol answer.
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
    return new Error(
      `Kafka ${version} did not start: ${reason}\n--- last lines of the broker output ---\n${tail(output)}` +
        (spawnError ? `\n${javaHint}` : ''),
    );
  };
  const deadline = started + startTimeoutMs;
  let sawStartedLine = false;
  for (;;) {
    if (hasExited()) {
      throw await failure(
        spawnError
          ? `cannot run ${java}: ${spawnError.message}`
          : `the broker exited (code ${child.exitCode}, signal ${child.signalCode})`,
      );
    }
    if (!sawStartedLine) sawStartedLine = STARTED_LINE.test(readLog());
    if (sawStartedLine && (await apiVersionsAnswers(port))) {
      ready = true;
      break;
    }
    if (Date.now() > deadline) {
      throw await failure(`not ready within ${startTimeoutMs / 1000} s`);
    }
    await sleep(200);
  }
  log(
    `Kafka ${version} ready on 127.0.0.1:${port} (controller ${controllerPort}) in ${seconds(started)}${formatTook}`,
  );

  return {
    brokers: `127.0.0.1:${port}`,
    port,
    controllerPort,
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
  const version = options.version ?? KAFKA_VERSION;
  const cacheDir = options['cache-dir'];
  if (command === 'fetch') {
    const classpath = await ensureKafkaJars({ cacheDir, version });
    console.log(`[kafka] ${classpath.length} jars in ${path.dirname(classpath[0])}`);
    return 0;
  }
  if (command !== 'start') {
    console.error(
      'usage: node tools/kafka-broker.mjs fetch [--version V] [--cache-dir DIR]\n' +
        '       node tools/kafka-broker.mjs start [--port 9092] [--controller-port 9093]\n' +
        '                                         [--data-dir DIR] [--log-dir DIR] [--version V]',
    );
    return 2;
  }

  let signalled = null;
  let resolveSignal;
  const signal = new Promise((resolve) => (resolveSignal = resolve));
  const onSignal = (name) => {
    if (signalled) {
      console.error(`[kafka] ${name} again: exiting now`);
      process.exit(130);
    }
    signalled = name;
    resolveSignal({ signal: name });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const broker = await startKafkaBroker({
    cacheDir,
    version,
    port: toPort(options.port, 9092),
    controllerPort: toPort(options['controller-port'], 9093),
    dataDir: options['data-dir'],
    logDir: options['log-dir'],
  });
  console.log(`[kafka] KAFKA_BROKERS=${broker.brokers}  (broker output: ${broker.logFile}); Ctrl-C to stop`);

  // Run until a signal, or until the broker dies on its own.
  const outcome = await Promise.race([broker.exited.then((exit) => ({ exit })), signal]);
  if (outcome.exit) {
    const output = existsSync(broker.logFile) ? readFileSync(broker.logFile, 'utf8') : '';
    console.error(
      `[kafka] the broker exited on its own (code ${outcome.exit.code}, signal ${outcome.exit.signal}):\n${tail(output)}`,
    );
    await broker.stop();
    return 1;
  }
  await broker.stop();
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error) => {
      console.error(`[kafka] ${error.message}`);
      process.exit(1);
    },
  );
}
