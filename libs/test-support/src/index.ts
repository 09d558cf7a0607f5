export { eventually, eventuallyPasses, type EventuallyOptions, type Probe } from './eventually.util';
export { withDeadline } from './deadline.util';

export { assertTestDatabaseName, createTestDatabase, type TestDatabase } from './test-database.util';
export {
  insertEnabledAppRows,
  insertProjectRows,
  type EnabledAppRows,
  type ProjectRows,
} from './pipeline-app-rows.util';

export {
  BIN_DIR,
  freePort,
  isRunning,
  killApps,
  READY_TIMEOUT_MS,
  REPO_ROOT,
  startApp,
  stopApp,
  STOP_TIMEOUT_MS,
  waitForApp,
  waitForReady,
  type AppProcess,
  type ExitStatus,
} from './app-process.util';
export { runProcess, type ProcessResult } from './run-process.util';
export { splitModeEnv, type SplitModeEnvOptions } from './split-env.util';
export { listeningTcpPorts, postgresAcceptsStranger } from './listening-ports.util';
export { OPEN_UNIX_SOCKET_SCRIPT, runNodeAsNobody } from './as-nobody.util';

export { startDnsTestServer, type DnsTestServer } from './dns-test-server.util';
export { startSmtpTestServer, type ReceivedMail, type SmtpTestServer } from './smtp-test-server.util';
export {
  npmTarball,
  startAppServer,
  tarGz,
  type AppServer,
  type ArchiveEntries,
} from './app-archive-server.util';
export { createTestS3Client, testS3Endpoint } from './s3-test.util';

export { ISO_8601_PATTERN, UUID_PATTERN } from './patterns.constants';
export {
  registerOpenApiDocument,
  registerOpenApiDocumentFrom,
  registerOpenApiDocumentOnce,
  unregisterOpenApiDocument,
} from './openapi-response-registry.util';
