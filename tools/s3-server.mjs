// @ts-check
// An S3-compatible server for tests, with no Docker: Adobe S3Mock's `exec` jar is fetched once with the
// machine's Maven into a cache outside the repository, unpacked, and run on its Java (17+) on loopback.
// Clients must use path-style addressing; any credentials and region are accepted.
//   node tools/s3-server.mjs fetch | start [--port N] [--data-dir DIR]
// Environment: XDG_CACHE_HOME, JAVA_HOME, and Maven's own settings.
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import * as jvm from './jvm-service.mjs';

/**
 * The newest 4.x. 5.0.0 to 5.2.0 break the JavaScript SDK's multipart uploads: they ignore a part's
 * `x-amz-checksum-crc32`, then refuse CompleteMultipartUpload, so every lib-storage Upload over 5 MB fails.
 */
export const S3MOCK_VERSION = '4.12.4';

/** @param {string} message */
function defaultLog(message) {
  console.log(`[s3] ${message}`);
}

/** @param {string} [version] */
export function defaultCacheDir(version = S3MOCK_VERSION) {
  return jvm.hogbaseCacheDir(`s3mock-${version}`);
}

const JAVA_HINT =
  'S3Mock needs Java 17 or newer: install a JDK (apt-get install openjdk-17-jre-headless) or set JAVA_HOME';

/**
 * Null when absent or incomplete.
 * @param {string} cacheDir
 * @param {string} version
 */
function readCompleteJar(cacheDir, version) {
  return jvm.readCompleteCache(cacheDir, version, (marker) => {
    if (typeof marker.jar !== 'string' || !Array.isArray(marker.libs)) return null;
    const jar = path.join(cacheDir, marker.jar);
    const libs = /** @type {string[]} */ (marker.libs).map((lib) => path.join(path.dirname(jar), 'lib', lib));
    return existsSync(jar) && libs.length > 0 && libs.every((lib) => existsSync(lib)) ? jar : null;
  });
}

/**
 * S3Mock's launcher jar (dependencies in `lib/` beside it), fetched with Maven the first time. Unpacked:
 * class-data sharing cannot archive classes loaded from jars nested in a fat jar.
 * @param {{ cacheDir?: string, version?: string, log?: (message: string) => void }} [options]
 */
export async function ensureS3MockJar({ cacheDir, version = S3MOCK_VERSION, log = defaultLog } = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  return jvm.ensureCached({
    cacheDir,
    readComplete: (dir) => readCompleteJar(dir, version),
    what: 'the S3Mock cache',
    log,
    fetching: `fetching S3Mock ${version} with Maven into ${cacheDir} (once; may take a minute)`,
    fetched: () => `fetched S3Mock ${version}`,
    fill: async (staging) => {
      const download = path.join(staging, 'download');
      await fs.mkdir(download, { recursive: true });
      // cwd: the empty staging folder, so Maven reads no pom.xml of the caller's.
      await jvm.runMaven(
        [
          `${jvm.MAVEN_DEPENDENCY_PLUGIN}:copy`,
          `-Dartifact=com.adobe.testing:s3mock:${version}:jar:exec`,
          `-DoutputDirectory=${download}`,
        ],
        {
          cwd: staging,
          hint: 'Maven is needed once to fetch S3Mock: apt-get install maven',
          what: `S3Mock ${version}`,
        },
      );
      const fatJar = path.join(download, `s3mock-${version}-exec.jar`);
      if (!existsSync(fatJar)) {
        throw new Error(`the S3Mock ${version} fetch has no ${path.basename(fatJar)}`);
      }

      // Spring Boot's own unpacking: a thin launcher jar whose manifest lists lib/*.jar.
      const unpacked = await jvm.run(
        jvm.javaBinary(),
        ['-Djarmode=tools', '-jar', fatJar, 'extract', '--destination', path.join(staging, 'app')],
        { cwd: staging, hint: JAVA_HINT },
      );
      if (unpacked.code !== 0) {
        throw new Error(
          `unpacking S3Mock ${version} failed (exit ${unpacked.code}):\n${jvm.tail(unpacked.output, 40)}${jvm.javaVersionHint(unpacked.output, JAVA_HINT)}`,
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
      await jvm.writeMarker(staging, { version, fetchedAt: new Date().toISOString(), jar, libs });
    },
  });
}

/**
 * One unsigned ListBuckets on a fresh connection: proves S3 is served, not just HTTP (the store is
 * created lazily on this first request).
 * @param {number} port
 * @returns {Promise<boolean>}
 */
function listBucketsAnswers(port, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (/** @type {boolean} */ ok) => {
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
 * A Spring bean file (`spring.main.sources`). S3Mock adds a second plain-HTTP connector with no address,
 * which would listen on every interface; this bean binds it to loopback before Spring binds connectors
 * (`lazy-init="false"` beats S3Mock's global lazy initialization).
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
 * S3Mock on http://127.0.0.1:<port>, resolved once it answers a ListBuckets.
 * @param {object} [options]
 * @param {string} [options.cacheDir]
 * @param {string} [options.version]
 * @param {string} [options.dataDir]  s3mock.log, temp files and objects; default a temp folder removed by stop()
 * @param {number} [options.port]  0 (default) picks a free one
 * @param {string[]} [options.jvmArgs]
 * @param {boolean} [options.classDataSharing]  default true
 * @param {number} [options.startTimeoutMs]
 * @param {(message: string) => void} [options.log]
 * @returns {Promise<{endpoint: string, port: number, pid: number, dataDir: string, logFile: string,
 *   exited: Promise<{code: number|null, signal: string|null}>, stop(): Promise<void>}>}
 */
export async function startS3Server({
  cacheDir,
  version = S3MOCK_VERSION,
  dataDir,
  port = 0,
  // C1 only and the serial collector: less start-up work for a server that handles little traffic.
  jvmArgs = ['-Xmx512m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'],
  classDataSharing: useCds = true,
  startTimeoutMs = jvm.START_TIMEOUT_MS,
  log = defaultLog,
} = {}) {
  cacheDir = path.resolve(cacheDir ?? defaultCacheDir(version));
  const jar = await ensureS3MockJar({ cacheDir, version, log });
  const started = Date.now();

  port = await jvm.choosePort(port, {
    busy: (reason) =>
      `cannot start S3Mock: 127.0.0.1:${port} is not free (${reason}); ` +
      'is another server running? Pass port 0 to pick a free port.',
  });

  const data = await jvm.serviceFolder(dataDir, path.join(os.tmpdir(), 'hogbase-s3-'));
  dataDir = data.dir;
  const removeOnStop = data.temporary ? dataDir : undefined;

  const storeDir = path.join(dataDir, 'store');
  const tmpDir = path.join(dataDir, 'tmp');
  const beansFile = path.join(dataDir, 'loopback-connector.xml');
  const logFile = path.join(dataDir, 's3mock.log');
  const java = jvm.javaBinary();
  const cds = useCds ? await jvm.classDataSharing(cacheDir, 's3mock', java, jar).catch(() => null) : null;

  const prepare = async () => {
    await fs.mkdir(storeDir, { recursive: true });
    await fs.mkdir(tmpDir, { recursive: true });
    await fs.writeFile(beansFile, loopbackConnectorXml());
    return [
      '-XX:+ExitOnOutOfMemoryError',
      '-Djava.awt.headless=true',
      // So a killed server leaves nothing in the system temp.
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
    ];
  };

  const server = await jvm.launchJvm({
    java,
    cwd: dataDir,
    logFile,
    cds,
    removeOnStop,
    label: 'S3Mock',
    role: 'server',
    log,
    prepare,
    started,
    startTimeoutMs,
    isReady: () => listBucketsAnswers(port),
    describeFailure: (reason, output, spawnError) => {
      const versionHint = spawnError ? `\n${JAVA_HINT}` : jvm.javaVersionHint(output, JAVA_HINT);
      return new Error(
        `S3Mock ${version} did not start: ${reason}\n--- last lines of the server output ---\n${jvm.tail(output)}${versionHint}`,
      );
    },
  });
  log(`S3Mock ${version} ready on http://127.0.0.1:${port} in ${jvm.seconds(started)}`);

  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    pid: /** @type {number} */ (server.child.pid), // spawned: it answered
    dataDir,
    logFile,
    exited: server.exited,
    stop: server.stop,
  };
}

jvm.runServiceCli(import.meta.url, {
  prefix: '[s3]',
  role: 'server',
  defaultVersion: S3MOCK_VERSION,
  usage:
    'usage: node tools/s3-server.mjs fetch [--version V] [--cache-dir DIR]\n' +
    '       node tools/s3-server.mjs start [--port 9090] [--data-dir DIR] [--version V]',
  fetch: async ({ cacheDir, version }) => {
    const jar = await ensureS3MockJar({ cacheDir, version });
    return `S3Mock ${version} in ${path.dirname(jar)}`;
  },
  start: async ({ cacheDir, version, options }) => {
    const server = await startS3Server({
      cacheDir,
      version,
      port: jvm.toPort(options.port, 9090),
      dataDir: options['data-dir'],
    });
    return {
      service: server,
      line: `S3_ENDPOINT=${server.endpoint}  (server output: ${server.logFile}); Ctrl-C to stop`,
    };
  },
});
