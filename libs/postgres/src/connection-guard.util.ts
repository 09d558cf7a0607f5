import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

type IsolationLevel = Parameters<EntityManager['transaction']>[0];

/**
 * A query was sent on a second connection while the same request holds a transaction open on its
 * own connection. Against the embedded Postgres this is a deadlock of the whole instance: its socket
 * server runs one statement at a time and serves only the transaction's connection until it ends,
 * so the second query waits for a transaction that waits for it. Against a real server it reads
 * outside the transaction (and deadlocks on the rows the transaction locked).
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

/** A query did not answer within the client-side bound; its connection was closed. */
export class PostgresQueryTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`Postgres did not answer within ${timeoutMs} ms; the connection was closed`);
    this.name = 'PostgresQueryTimeoutError';
  }
}

interface OpenTransaction {
  /** The transaction's own runner, once TypeORM has connected it. */
  runner?: QueryRunner;
  open: boolean;
}

const openTransactions = new AsyncLocalStorage<OpenTransaction>();

/**
 * The EntityManager of the transaction this async context has open, if it has one: what a
 * repository must query through so that its reads and writes join the caller's transaction.
 */
export function openTransactionManager(): EntityManager | undefined {
  const transaction = openTransactions.getStore();
  return transaction?.open ? transaction.runner?.manager : undefined;
}

function refuseOtherConnection(runner: QueryRunner | undefined): void {
  const transaction = openTransactions.getStore();
  if (transaction?.open && transaction.runner !== runner) throw new CrossConnectionQueryError();
}

export interface ConnectionGuardOptions {
  /** Client-side bound on one query, connection wait included. */
  queryTimeoutMs: number;
  /** Client-side bound on a transaction left idle (no query in flight) on its connection. */
  idleInTransactionTimeoutMs: number;
}

/** Runners whose statements may run unbounded: the migrations'. */
const unboundedRunners = new WeakSet<QueryRunner>();

/** Lifts the client-side bounds from one runner (migrations may take as long as they need). */
export function unboundRunner(runner: QueryRunner): void {
  unboundedRunners.add(runner);
}

/** The pg client a runner holds, if it connected; TypeORM keeps it protected. */
function pgClientOf(runner: QueryRunner): { end(): Promise<void> } | undefined {
  return (runner as unknown as { databaseConnection?: { end(): Promise<void> } }).databaseConnection;
}

/**
 * Closing the connection is the one remedy that always works: pg discards a closed client when it
 * is released, a real server rolls back its transaction, and the embedded server drops the
 * statements it had queued for it and rolls back the transaction it held, which frees every other
 * connection waiting behind it.
 */
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
    // TRICKY: the bound starts once the runner holds a connection (the pool bounds that wait with
    // connectionTimeoutMillis). Were it to fire before, TypeORM would release a runner that has no
    // connection yet, and the connection arriving later would stay checked out for good.
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
 * Makes the "query on another connection inside a transaction" class of bug fail at once instead
 * of hanging, and bounds every query and every idle transaction on the client side:
 *
 * - `dataSource.transaction(work)` runs `work` in an async context that remembers the
 *   transaction's runner; a query issued from that context on any other runner (a repository of
 *   `dataSource`, `dataSource.query`, a nested `dataSource.transaction`) throws
 *   CrossConnectionQueryError before it asks the pool for a connection.
 * - a query slower than `queryTimeoutMs` fails and its connection is closed. The embedded Postgres
 *   ignores statement_timeout (PGlite runs in one WASM thread), and a statement queued behind
 *   another connection's transaction never reaches Postgres at all, so only the client can bound it.
 * - a transaction idle for `idleInTransactionTimeoutMs` loses its connection: the same job as
 *   idle_in_transaction_session_timeout, which the embedded Postgres cannot do.
 *
 * Cost: one AsyncLocalStorage read and one timer per query.
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
