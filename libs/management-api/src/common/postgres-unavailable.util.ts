import { QueryFailedError } from 'typeorm';
import { PostgresQueryTimeoutError } from '@hogbase/postgres';

/**
 * SQLSTATEs of a session refused or ended by the server whatever its severity: class 08
 * (connection_exception) is matched by prefix; 53300 too_many_connections (max_connections or a
 * role's or database's CONNECTION LIMIT), 57P01 admin_shutdown (pg_terminate_backend, a fast
 * shutdown), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down).
 */
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03']);

/**
 * 25P03 idle_in_transaction_session_timeout is FATAL too, but the request that left its
 * transaction idle ended its own session: a bug of that request, not an outage.
 */
const REQUEST_ENDED_SESSION = '25P03';

/** Socket errors of connecting to Postgres (TCP or its Unix socket) or of losing the connection. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * What node-postgres (pg 8) and its pool throw, with no code, when no connection can be had or the
 * one in use is lost: the server or network closed it, connecting took longer than
 * connectionTimeoutMillis, the pool had no free connection within it, or an earlier socket error.
 */
const CLIENT_MESSAGES = new Set([
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
]);

interface ErrorFields {
  code?: unknown;
  severity?: unknown;
  syscall?: unknown;
  errors?: unknown;
}

function isNetworkFailure(error: ErrorFields): boolean {
  const { code, syscall } = error;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // ENOENT of a connect: the Unix socket is not there (the server is down or was never started).
    if (code === 'ENOENT' && syscall === 'connect') return true;
  }
  // Connecting to a name with several addresses (localhost: ::1 and 127.0.0.1) fails with all of them.
  return Array.isArray(error.errors) && error.errors.some((inner) => isNetworkFailure(inner as ErrorFields));
}

function isSessionRefusedOrEnded(error: ErrorFields): boolean {
  const { code, severity } = error;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return false;
  if (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code)) return true;
  // FATAL ends the session: what the server answers a connection it refuses (too many, not
  // accepting connections, the role may not log in, the database is gone) or a session it ends.
  return (severity === 'FATAL' || severity === 'PANIC') && code !== REQUEST_ENDED_SESSION;
}

/**
 * Whether `error` says Postgres cannot be used right now, rather than that this request's statement
 * failed: no connection could be had (refused, exhausted, timed out, the socket missing), the one in
 * use was lost, or Postgres did not answer within the client-side bound. Management answers those
 * 503 with Retry-After: the same request may well succeed later, and the fault is not the client's.
 *
 * It looks at what pg and TypeORM throw as they are: connection failures come out of the pool raw
 * (TypeORM does not wrap them), failures of a running statement inside a QueryFailedError whose
 * driverError is pg's. A statement Postgres refused (a constraint, a syntax error, a cancelled
 * statement: severity ERROR) is not an outage.
 */
export function isPostgresUnavailable(error: unknown): boolean {
  if (error instanceof PostgresQueryTimeoutError) return true;
  const failure: unknown = error instanceof QueryFailedError ? error.driverError : error;
  // NOTE: not `instanceof Error`: Node's own socket errors come from another realm under Jest's VM.
  if (typeof failure !== 'object' || failure === null) return false;
  const fields = failure as ErrorFields & { message?: unknown };
  return (
    isSessionRefusedOrEnded(fields) ||
    isNetworkFailure(fields) ||
    (typeof fields.message === 'string' && CLIENT_MESSAGES.has(fields.message))
  );
}
