import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

type IsolationLevel = Parameters<EntityManager['transaction']>[0];

/**
 * A second connection's query inside a transaction deadlocks the embedded Postgres (it serves only the
 * transaction's connection); against a real server it reads outside the transaction.
 */
export class CrossConnectionQueryError extends Error {
  constructor() {
    super(
      'a query on another connection while this request holds a transaction: pass the transaction’s ' +
        'EntityManager down to every query made inside it',
    );
    this.name = 'CrossConnectionQueryError';
  }
}

export class PostgresQueryTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`Postgres did not answer within ${timeoutMs} ms; the connection was closed`);
    this.name = 'PostgresQueryTimeoutError';
  }
}

interface OpenTransaction {
  runner?: QueryRunner;
  open: boolean;
}

const openTransactions = new AsyncLocalStorage<OpenTransaction>();

/** What a repository queries through so that it joins the caller's transaction. */
export function openTransactionManager(): EntityManager | undefined {
  const transaction = openTransactions.getStore();
  return transaction?.open ? transaction.runner?.manager : undefined;
}

function refuseOtherConnection(runner: QueryRunner | undefined): void {
  const transaction = openTransactions.getStore();
  if (transaction?.open && transaction.runner !== runner) throw new CrossConnectionQueryError();
}

export interface ConnectionGuardOptions {
  /** Connection wait included. */
  queryTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

const unboundedRunners = new WeakSet<QueryRunner>();

/** Migrations may take as long as they need. */
export function unboundRunner(runner: QueryRunner): void {
  unboundedRunners.add(runner);
}

/** TypeORM keeps it protected. */
function pgClientOf(runner: QueryRunner): { end(): Promise<void> } | undefined {
  return (runner as unknown as { databaseConnection?: { end(): Promise<void> } }).databaseConnection;
}

/** Always works: pg discards the client, a real server rolls back, the embedded one frees the queue. */
function closeConnection(runner: QueryRunner): void {
  pgClientOf(runner)
    ?.end()
    .catch(() => undefined);
}

function guardRunner(runner: QueryRunner, options: ConnectionGuardOptions): void {
  const query = runner.query.bind(runner) as (...args: Parameters<QueryRunner['query']>) => Promise<unknown>;
  const stream = runner.stream.bind(runner);
  const release = runner.release.bind(runner);
  let idleTimer: NodeJS.Timeout | undefined;
  const stopIdleTimer = () => {
    clearTimeout(idleTimer);
    idleTimer = undefined;
  };

  runner.query = (async (...args: Parameters<QueryRunner['query']>) => {
    refuseOtherConnection(runner);
    stopIdleTimer();
    if (unboundedRunners.has(runner) || runner.isReleased) return query(...args);
    // TRICKY: the bound starts once the runner holds a connection: fired before, TypeORM would release
    // a runner with no connection yet, and the one arriving later would stay checked out for good.
    await runner.connect();
    const pending = query(...args);
    let deadline: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      deadline = setTimeout(() => {
        closeConnection(runner);
        reject(new PostgresQueryTimeoutError(options.queryTimeoutMs));
      }, options.queryTimeoutMs);
    });
    // The query settles (with "Connection terminated") after a timeout; nobody awaits it then.
    pending.catch(() => undefined);
    return await Promise.race([pending, timedOut]).finally(() => {
      clearTimeout(deadline);
      if (runner.isTransactionActive && !runner.isReleased) {
        idleTimer = setTimeout(() => {
          if (runner.isTransactionActive) closeConnection(runner);
        }, options.idleInTransactionTimeoutMs);
        idleTimer.unref();
      }
    });
  }) as QueryRunner['query'];

  runner.stream = ((...args: Parameters<QueryRunner['stream']>) => {
    refuseOtherConnection(runner);
    return stream(...args);
  }) as QueryRunner['stream'];

  runner.release = () => {
    stopIdleTimer();
    return release();
  };
}

type TransactionWork<T> = (manager: EntityManager) => Promise<T>;

/**
 * A query on another connection inside `dataSource.transaction(work)` throws instead of hanging; every
 * query and idle transaction is bounded client-side, as the embedded Postgres honours no server timeout.
 */
export function guardDataSource(dataSource: DataSource, options: ConnectionGuardOptions): void {
  const driver = dataSource.driver;
  const createQueryRunner = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode) => {
    const runner = createQueryRunner(mode);
    guardRunner(runner, options);
    return runner;
  };

  const manager = dataSource.manager;
  const transaction = manager.transaction.bind(manager) as <T>(
    isolation: IsolationLevel | undefined,
    work: TransactionWork<T>,
  ) => Promise<T>;
  manager.transaction = <T>(
    isolationOrWork: IsolationLevel | TransactionWork<T>,
    maybeWork?: TransactionWork<T>,
  ): Promise<T> => {
    const [isolation, work] =
      typeof isolationOrWork === 'function' ? [undefined, isolationOrWork] : [isolationOrWork, maybeWork];
    if (!work) throw new TypeError('a transaction needs a callback');
    // A transaction opened inside another one would take a second connection.
    refuseOtherConnection(undefined);
    const context: OpenTransaction = { open: false };
    return openTransactions.run(context, () =>
      transaction(isolation, async (transactionManager) => {
        context.runner = transactionManager.queryRunner;
        context.open = true;
        try {
          return await work(transactionManager);
        } finally {
          context.open = false;
        }
      }),
    );
  };
}
