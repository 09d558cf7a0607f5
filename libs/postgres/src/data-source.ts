import { DataSource, DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface PostgresConnectionOptions {
  url: string;
  poolSize?: number;
  applicationName?: string;
}

export function postgresDataSourceOptions(options: PostgresConnectionOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    // NOTE: never synchronize; the schema is what the migrations say.
    synchronize: false,
    migrationsRun: false,
    logging: false,
    applicationName: options.applicationName ?? 'hogbase',
    extra: { max: options.poolSize ?? 10 },
  };
}

/** Opens a data source and brings its schema up to date. */
export async function openDataSource(options: PostgresConnectionOptions): Promise<DataSource> {
  const dataSource = new DataSource(postgresDataSourceOptions(options));
  await dataSource.initialize();
  try {
    await runMigrationsExclusively(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

// Any constant works; it only has to be the same for every process migrating this database.
const MIGRATION_LOCK_KEY = 7_345_021;

/**
 * Several processes may start against one database at once (split mode, parallel test workers):
 * a session-level advisory lock makes them migrate one after the other instead of racing.
 */
export async function runMigrationsExclusively(dataSource: DataSource): Promise<void> {
  const lockRunner = dataSource.createQueryRunner();
  await lockRunner.connect();
  try {
    await lockRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await lockRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lockRunner.release();
  }
}
