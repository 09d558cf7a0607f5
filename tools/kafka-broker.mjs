// @ts-check
// A real Kafka broker for tests and split mode on one machine, with no Docker: the official jars are
// fetched once with the machine's Maven into a cache outside the repository, and run on its Java (17+)
// as a single KRaft node on loopback.
//   node tools/kafka-broker.mjs fetch | start [--port N] [--controller-port N] [--data-dir DIR] [--log-dir DIR]
// Environment: XDG_CACHE_HOME, JAVA_HOME, and Maven's own settings.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import * as jvm from './jvm-service.mjs';

/**
 * The newest Kafka 4 whose artifacts all resolve on Maven Central: 4.4.0's dependency
 * `kafka-tools-api:4.4.0` is not published.
 */
export const KAFKA_VERSION = '4.3.1';
/** Kafka 4 ships Log4j 2 but its SLF4J binding only in its tarball. */
const LOG4J_VERSION = '2.25.4';
const STARTED_LINE = /Kafka Server started|\bstarted \(kafka\.server/;

/** @param {string} message */
function defaultLog(message) {
  console.log(`[kafka] ${message}`);
}

/** @param {string} [version] */
export function defaultCacheDir(version = KAFKA_VERSION) {
  return jvm.hogbaseCacheDir(`kafka-${version}`);
}

/** @param {string} version */
function pomXml(version) {
  // Some Kafka 4 poms list test-only libraries (Mockito, JUnit, ApacheDS) as runtime dependencies.
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

/**
 * Null when the folder is absent or incomplete.
 * @param {string} cacheDir
 * @param {string} version
 */
function readCompleteClasspath(cacheDir, version) {
  return jvm.readCompleteCache(cacheDir, version, (marker) => {
    if (!Array.isArray(marker.jars) || marker.jars.length === 0) return null;
    const jars = /** @type {string[]} */ (marker.jars).map((jar) => path.join(cacheDir, 'libs', jar));
    return jars.every((jar) => existsSync(jar)) ? jars : null;
  });
}

/**
 * The broker's classpath (absolute jar paths), fetched with Maven the first time.
 * @param {{ cacheDir?: string, version?: string, log?: (message: string) => void }} [options]
 */
export async function ensureKafkaJars({ cacheDir, version = KAFKA_VERSION, log = defaultLog } = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  return jvm.ensureCached({
    cacheDir,
    readComplete: (dir) => readCompleteClasspath(dir, version),
    what: 'the Kafka jar cache',
    log,
    fetching: `fetching Apache Kafka ${version} jars with Maven into ${cacheDir} (once; may take minutes)`,
    fetched: (jars) => `fetched ${jars.length} jars`,
    fill: async (staging) => {
      await fs.mkdir(path.join(staging, 'libs'), { recursive: true });
      await fs.writeFile(path.join(staging, 'pom.xml'), pomXml(version));
      await jvm.runMaven(
        [
          '-f',
          path.join(staging, 'pom.xml'),
          `${jvm.MAVEN_DEPENDENCY_PLUGIN}:copy-dependencies`,
          '-DincludeScope=runtime',
          '-Dmdep.prependGroupId=true',
          `-DoutputDirectory=${path.join(staging, 'libs')}`,
        ],
        {
          cwd: staging,
          hint: 'Maven is needed once to fetch the Kafka jars: apt-get install maven',
          what: `Apache Kafka ${version}`,
        },
      );
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
      await jvm.writeMarker(staging, {
        version,
        log4j: LOG4J_VERSION,
        fetchedAt: new Date().toISOString(),
        jars,
      });
    },
  });
}

/**
 * @param {number} port
 * @param {string} what
 * @param {number | undefined} avoid
 */
function chooseKafkaPort(port, what, avoid) {
  return jvm.choosePort(port, {
    avoid,
    busy: (reason) =>
      `cannot start Kafka: 127.0.0.1:${port} (${what}) is not free (${reason}); ` +
      'is another broker running? Pass port 0 to pick free ports.',
  });
}

/**
 * One ApiVersions (v0) request on a fresh connection: proves the broker serves Kafka, not just TCP.
 * @param {number} port
 * @returns {Promise<boolean>}
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
    const finish = (/** @type {boolean} */ ok) => {
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

/**
 * @param {{ port: number, controllerPort: number, logDir: string,
 *   overrides: Record<string, string | number | boolean> }} options
 */
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
    // One node: internal topics need replication factor 1, or groups never find a coordinator.
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

/** @param {'INFO' | 'WARN'} level */
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
 * A single-node KRaft broker on 127.0.0.1, resolved once it answers a Kafka protocol request.
 * @param {object} [options]
 * @param {string} [options.cacheDir]
 * @param {string} [options.version]
 * @param {string} [options.dataDir]  server.properties and kafka.log; default a temp folder removed by stop()
 * @param {string} [options.logDir]  Kafka's data, kept across starts; default fresh, removed by stop()
 * @param {number} [options.port]  0 (default) picks a free one
 * @param {number} [options.controllerPort]  0 (default) picks a free one
 * @param {Record<string, string|number|boolean>} [options.overrides]  extra server.properties
 * @param {string[]} [options.jvmArgs]
 * @param {boolean} [options.classDataSharing]  default true
 * @param {number} [options.startTimeoutMs]
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
  startTimeoutMs = jvm.START_TIMEOUT_MS,
  log = defaultLog,
} = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  const classpath = (await ensureKafkaJars({ cacheDir, version, log })).join(path.delimiter);
  const started = Date.now();

  port = await chooseKafkaPort(port, 'broker port', undefined);
  controllerPort = await chooseKafkaPort(controllerPort, 'controller port', port);

  /** @type {string | undefined} */
  let removeOnStop;
  const data = await jvm.serviceFolder(dataDir, path.join(os.tmpdir(), 'hogbase-kafka-'));
  dataDir = data.dir;
  if (data.temporary) removeOnStop = dataDir;
  const kraft = await jvm.serviceFolder(logDir, path.join(dataDir, 'kraft-'));
  logDir = kraft.dir;
  if (kraft.temporary) removeOnStop ??= logDir;

  const configFile = path.join(dataDir, 'server.properties');
  const log4jFile = path.join(dataDir, 'log4j2.properties');
  const toolLog4jFile = path.join(dataDir, 'log4j2-tools.properties');
  const logFile = path.join(dataDir, 'kafka.log');
  const java = jvm.javaBinary();
  const cds = useCds
    ? await jvm.classDataSharing(cacheDir, 'broker', java, classpath).catch(() => null)
    : null;
  const javaHint =
    'Kafka needs Java 17 or newer: install a JDK (apt-get install openjdk-17-jre-headless) or set JAVA_HOME';

  let formatTook = '';
  const prepare = async () => {
    await fs.writeFile(configFile, serverProperties({ port, controllerPort, logDir, overrides }));
    await fs.writeFile(log4jFile, log4jProperties('INFO'));
    await fs.writeFile(toolLog4jFile, log4jProperties('WARN'));

    // Static quorum (controller.quorum.voters), so no --standalone.
    if (!existsSync(path.join(logDir, 'meta.properties'))) {
      const formatStarted = Date.now();
      const clusterId = randomBytes(16).toString('base64url');
      const format = await jvm.run(
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
        throw new Error(
          `formatting Kafka storage failed (exit ${format.code}):\n${jvm.tail(format.output, 40)}${jvm.javaVersionHint(format.output, javaHint)}`,
        );
      }
      formatTook = ` (storage format ${jvm.seconds(formatStarted)})`;
    }

    return [
      // Kafka's own defaults, then the caller's, which win.
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
    ];
  };

  let sawStartedLine = false;
  const broker = await jvm.launchJvm({
    java,
    cwd: dataDir,
    logFile,
    cds,
    removeOnStop,
    label: 'Kafka',
    role: 'broker',
    log,
    prepare,
    started,
    startTimeoutMs,
    isReady: async (service) => {
      if (!sawStartedLine) sawStartedLine = STARTED_LINE.test(service.readLog());
      return sawStartedLine && (await apiVersionsAnswers(port));
    },
    describeFailure: (reason, output, spawnError) =>
      new Error(
        `Kafka ${version} did not start: ${reason}\n--- last lines of the broker output ---\n${jvm.tail(output)}` +
          (spawnError ? `\n${javaHint}` : ''),
      ),
  });
  log(
    `Kafka ${version} ready on 127.0.0.1:${port} (controller ${controllerPort}) in ${jvm.seconds(started)}${formatTook}`,
  );

  return {
    brokers: `127.0.0.1:${port}`,
    port,
    controllerPort,
    pid: /** @type {number} */ (broker.child.pid), // spawned: it answered
    dataDir,
    logFile,
    exited: broker.exited,
    stop: broker.stop,
  };
}

jvm.runServiceCli(import.meta.url, {
  prefix: '[kafka]',
  role: 'broker',
  defaultVersion: KAFKA_VERSION,
  usage:
    'usage: node tools/kafka-broker.mjs fetch [--version V] [--cache-dir DIR]\n' +
    '       node tools/kafka-broker.mjs start [--port 9092] [--controller-port 9093]\n' +
    '                                         [--data-dir DIR] [--log-dir DIR] [--version V]',
  fetch: async ({ cacheDir, version }) => {
    const classpath = await ensureKafkaJars({ cacheDir, version });
    return `${classpath.length} jars in ${path.dirname(classpath[0])}`;
  },
  start: async ({ cacheDir, version, options }) => {
    const broker = await startKafkaBroker({
      cacheDir,
      version,
      port: jvm.toPort(options.port, 9092),
      controllerPort: jvm.toPort(options['controller-port'], 9093),
      dataDir: options['data-dir'],
      logDir: options['log-dir'],
    });
    return {
      service: broker,
      line: `KAFKA_BROKERS=${broker.brokers}  (broker output: ${broker.logFile}); Ctrl-C to stop`,
    };
  },
});
