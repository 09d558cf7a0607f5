import { MigrationExecutor, type DataSource, type QueryRunner } from 'typeorm';
import { unboundRunner } from './connection-guard.util';

export const MIGRATIONS_TABLE = 'typeorm_migrations';

export const MIGRATION_LOCK_KEY = 7_345_021;

/** Start-up and `admin migrate`: an advisory lock serialises concurrent migrators; timeouts are lifted. */
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

/** For a process that waits while another one migrates (`migrate --wait`). */
export async function pendingPostgresMigrations(dataSource: DataSource): Promise<string[]> {
  const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
  return pending.map((migration) => migration.name);
}

/** No table is created here: outside the lock, two processes creating it would collide. */
async function executedMigrations(executor: MigrationExecutor, runner: QueryRunner): Promise<string[]> {
  if (!(await runner.hasTable(MIGRATIONS_TABLE))) return [];
  const executed = await executor.getExecutedMigrations();
  return executed.sort((left, right) => left.timestamp - right.timestamp).map((migration) => migration.name);
}
