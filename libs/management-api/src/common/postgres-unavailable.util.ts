import { QueryFailedError } from 'typeorm';
import { PostgresQueryTimeoutError } from '@hogbase/postgres';

/** too_many_connections, admin_shutdown, crash_shutdown, cannot_connect_now; class 08 by prefix. */
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03']);

/** idle_in_transaction_session_timeout is FATAL, but a bug of the request that idled, not an outage. */
const REQUEST_ENDED_SESSION = '25P03';

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

/** What node-postgres and its pool throw, without a code, when no connection can be had or it is lost. */
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
    // The Unix socket is missing: the server is down.
    if (code === 'ENOENT' && syscall === 'connect') return true;
  }
  // A name with several addresses (localhost) fails with an AggregateError of them all.
  return Array.isArray(error.errors) && error.errors.some((inner) => isNetworkFailure(inner as ErrorFields));
}

function isSessionRefusedOrEnded(error: ErrorFields): boolean {
  const { code, severity } = error;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return false;
  if (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code)) return true;
  // FATAL: the server refused the connection or ended the session.
  return (severity === 'FATAL' || severity === 'PANIC') && code !== REQUEST_ENDED_SESSION;
}

/**
 * Whether Postgres cannot be used right now (answered 503 with Retry-After), rather than this
 * request's statement failed. Connection failures come out of the pool raw; a running statement's
 * inside a QueryFailedError. A statement Postgres refused (severity ERROR) is not an outage.
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
