import path from 'node:path';
import { BIN_DIR } from './app-process.util';

export interface SplitModeEnvOptions {
  databaseUrl: string;
  brokers: readonly string[];
  /** One per test run, so a group never resumes another run's offsets. */
  consumerGroup: string;
  /** chDB keeps its data under `<dataDir>/clickhouse`. */
  dataDir: string;
}

/** An app started alone (split mode) on the pinned Node, chDB under DATA_DIR; callers add the port. */
export function splitModeEnv(options: SplitModeEnvOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${BIN_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
    DATABASE_URL: options.databaseUrl,
    KAFKA_BROKERS: options.brokers.join(','),
    KAFKA_CONSUMER_GROUP: options.consumerGroup,
    DATA_DIR: options.dataDir,
    CLICKHOUSE_DATA_PATH: path.join(options.dataDir, 'clickhouse'),
    LOG_LEVEL: 'info',
    // The tests' destinations (their Postgres, S3Mock, receivers) listen on loopback.
    EGRESS_ALLOWED_PRIVATE_NETWORKS: '127.0.0.0/8',
  };
  delete env.CLICKHOUSE_URL;
  // Jest's own flags are not what an operator runs the app with.
  delete env.NODE_OPTIONS;
  return env;
}
