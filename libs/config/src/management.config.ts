import path from 'node:path';
import {
  Environment,
  readBoolean,
  readEnum,
  readInteger,
  readPort,
  readString,
  readUrl,
  redact,
  ConfigError,
} from './env.util';
import { type ClickHouseConfig, loadClickHouseConfig } from './clickhouse.config';
import { type EgressConfig, loadEgressConfig } from './egress.config';
import { readEncryptionKeys } from './secret-box.util';
import { readMetricsToken } from './metrics-token.config';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface DatabaseConfig {
  /** Absent: the standalone app runs the embedded one under `dataDir`. */
  url: string | undefined;
  poolSize: number;
}

export interface SmtpConfig {
  url: string;
  from: string;
}

export interface AppsConfig {
  /** SECURITY: the only folder `file:` apps are read from; unset, an API key can never make the server read its disk. */
  localDirectory: string | undefined;
  npmRegistryUrl: string;
  /** Unset: the catalog bundled with the server. */
  repositoryUrl: string | undefined;
}

export interface ManagementConfig {
  host: string;
  port: number;
  dataDir: string;
  database: DatabaseConfig;
  /** Invite e-mails are sent only when SMTP is configured, as PostHog does. */
  smtp: SmtpConfig | undefined;
  /** For domain verification; the system resolver when empty. */
  dnsServers: string[];
  siteUrl: string;
  instanceTag: string;
  logLevel: LogLevel;
  metricsToken: string | undefined;
  trustProxy: boolean;
  /** Absent: a key generated into DATA_DIR (openSecretBox). */
  encryptionKeys: Buffer[] | undefined;
  apps: AppsConfig;
  egress: EgressConfig;
  /** An S3 export may be saved without keys, running with the server's AWS identity; off, that is a 400. */
  batchExportS3ServerCredentials: boolean;
  clickhouse: ClickHouseConfig;
}

export function loadManagementConfig(env: Environment = process.env): ManagementConfig {
  const port = readPort(env, 'MANAGEMENT_PORT', 8000);
  const host = readString(env, 'MANAGEMENT_HOST', '127.0.0.1');
  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres', 'postgresql']);
  const smtpUrl = readUrl(env, 'SMTP_URL', ['smtp', 'smtps']);
  const dnsServers = (readString(env, 'DNS_SERVERS') ?? '')
    .split(',')
    .map((server) => server.trim())
    .filter(Boolean);
  for (const server of dnsServers) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[0-9.]+|[0-9a-fA-F:]+)(:\d{1,5})?$/.test(server)) {
      throw new ConfigError('DNS_SERVERS', server, 'each entry must be an IP address with an optional :port');
    }
  }
  return {
    host,
    port,
    dataDir: path.resolve(readString(env, 'DATA_DIR', './.data')),
    database: {
      url: databaseUrl?.toString(),
      poolSize: readInteger(env, 'DATABASE_POOL_SIZE', 10, 1),
    },
    smtp: smtpUrl
      ? { url: smtpUrl.toString(), from: readString(env, 'EMAIL_FROM', 'hogbase <noreply@localhost>') }
      : undefined,
    dnsServers,
    siteUrl: readString(env, 'SITE_URL', `http://${host}:${port}`).replace(/\/+$/, ''),
    instanceTag: readString(env, 'INSTANCE_TAG', 'none'),
    logLevel: readEnum(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    metricsToken: readMetricsToken(env),
    trustProxy: readBoolean(env, 'TRUST_PROXY', false),
    encryptionKeys: readEncryptionKeys(env),
    apps: loadAppsConfig(env),
    egress: loadEgressConfig(env),
    batchExportS3ServerCredentials: readBoolean(env, 'BATCH_EXPORT_S3_SERVER_CREDENTIALS', false),
    clickhouse: loadClickHouseConfig(env),
  };
}

function loadAppsConfig(env: Environment): AppsConfig {
  const localDirectory = readString(env, 'APPS_LOCAL_DIRECTORY');
  if (localDirectory !== undefined && !path.isAbsolute(localDirectory)) {
    throw new ConfigError('APPS_LOCAL_DIRECTORY', localDirectory, 'must be an absolute path');
  }
  const npmRegistry = readUrl(env, 'APPS_NPM_REGISTRY_URL', ['http', 'https']);
  const repository = readUrl(env, 'APPS_REPOSITORY_URL', ['http', 'https']);
  return {
    localDirectory: localDirectory === undefined ? undefined : path.resolve(localDirectory),
    npmRegistryUrl: (npmRegistry?.toString() ?? 'https://registry.npmjs.org').replace(/\/+$/, ''),
    repositoryUrl: repository?.toString(),
  };
}

export function describeDatabase(config: DatabaseConfig, dataDir: string): string {
  return config.url ? redact(config.url) : `embedded Postgres in ${dataDir}`;
}
