import path from 'node:path';
import { ConfigError, Environment, readString, readUrl, redact } from './env.util';

export interface ClickHouseConfig {
  /** Absent: the embedded chDB engine runs under `dataPath`. */
  url: string | undefined;
  username: string | undefined;
  password: string | undefined;
  database: string;
  /** Migrations then run `ON CLUSTER`. */
  cluster: string | undefined;
  dataPath: string;
}

// SECURITY: spliced into DDL (identifiers cannot be bound), so only characters that need no quoting.
const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const CLUSTER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function loadClickHouseConfig(env: Environment = process.env): ClickHouseConfig {
  const url = readUrl(env, 'CLICKHOUSE_URL', ['http', 'https']);
  const database = readString(env, 'CLICKHOUSE_DATABASE', 'hogbase');
  if (!DATABASE_NAME.test(database)) {
    throw new ConfigError(
      'CLICKHOUSE_DATABASE',
      database,
      'must be letters, digits and underscores, not starting with a digit',
    );
  }
  const cluster = readString(env, 'CLICKHOUSE_CLUSTER');
  if (cluster !== undefined) {
    if (!CLUSTER_NAME.test(cluster)) {
      throw new ConfigError('CLICKHOUSE_CLUSTER', cluster, "must be letters, digits, '_', '.' and '-'");
    }
    if (!url) {
      throw new ConfigError(
        'CLICKHOUSE_CLUSTER',
        cluster,
        'needs CLICKHOUSE_URL: the embedded chDB engine is one node',
      );
    }
  }
  const dataDir = path.resolve(readString(env, 'DATA_DIR', './.data'));
  return {
    url: url?.toString(),
    username: readString(env, 'CLICKHOUSE_USER'),
    password: readString(env, 'CLICKHOUSE_PASSWORD'),
    database,
    cluster,
    dataPath: path.resolve(readString(env, 'CLICKHOUSE_DATA_PATH', path.join(dataDir, 'clickhouse'))),
  };
}

export function describeClickHouse(config: ClickHouseConfig): string {
  const target = config.url ? redact(config.url) : `embedded chDB in ${config.dataPath}`;
  return `${target}, database ${config.database}${config.cluster ? ` on cluster ${config.cluster}` : ''}`;
}
