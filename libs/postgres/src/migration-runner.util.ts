import { MigrationExecutor, type DataSource, type QueryRunner } from 'typeorm';
import { unboundRunner } from './connection-guard';

export const MIGRATIONS_TABLE = 'typeorm_migrations';

// Any constant works; it only has to be the same for every process migrating this database.
export const MIGRATION_LOCK_KEY = 7_345_021;

/**
 * Applies the pending migrations, each in its own transaction, and returns the names this database
 * gained, oldest first. What start-up and `npm run admin -- migrate` both run.
 *
 * Several processes may start against one database at once (split mode, parallel test workers):
 * a session-level advisory lock makes them migrate one after the other instead of racing. The
 * migrations run on the lock's own connection with the timeouts lifted: waiting for another
 * process's migrations, or building an index on a large table, may rightly take minutes.
 */
export async function migratePostgres(dataSource: DataSource): Promise<{ applied: string[] }> {
  const lockRunner = dataSource.createQueryRunner();
  unboundRunner(lockRunner);
  await lockRunner.connect();
  try {
    // NOTE: idle_in_transaction_session_timeout is left alone: migrations are never idle, and a
    // SET of it hangs the embedded Postgres.
    await lockRunner.query('SET statement_timeout = 0');
    await lockRunner.query('SET lock_timeout = 0');
    const executor = new MigrationExecutor(dataSource, lockRunner);
    executor.transaction = 'each';
    // NOTE: read before waiting for the lock: what a process migrating at the same moment applies
    // meanwhile is reported too, which is still what this database gained.
    const before = new Set(await executedMigrations(executor, lockRunner));
    await lockRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await executor.executePendingMigrations();
    const after = await executedMigrations(executor, lockRunner);
    return { applied: after.filter((name) => !before.has(name)) };
  } finally {
    await lockRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    // Back to the connection's own bounds before the pool hands it to anyone else.
    await lockRunner.query('RESET statement_timeout').catch(() => undefined);
    await lockRunner.query('RESET lock_timeout').catch(() => undefined);
    await lockRunner.release();
  }
}

/**
 * Names of the migrations not yet applied, oldest first: all of them before the first run. For a
 * process that waits while another one migrates (`migrate --wait`).
 */
export async function pendingPostgresMigrations(dataSource: DataSource): Promise<string[]> {
  const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
  return pending.map((migration) => migration.name);
}

/**
 * Names recorded in the migrations table, oldest first. Before the first run there is no table,
 * and none is created here: outside the lock, two processes creating it would collide.
 */
async function executedMigrations(executor: MigrationExecutor, runner: QueryRunner): Promise<string[]> {
  if (!(await runner.hasTable(MIGRATIONS_TABLE))) return [];
  const executed = await executor.getExecutedMigrations();
  return executed.sort((left, right) => left.timestamp - right.timestamp).map((migration) => migration.name);
}
