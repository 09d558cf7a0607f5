import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { PostgresQueryTimeoutError } from '@hogbase/postgres';
import { isPostgresUnavailable } from './postgres-unavailable.util';

/**
 * The shapes below are those pg 8 and TypeORM produce (postgres-unavailable.util.integration-spec.ts
 * gets them from a real server): pg's DatabaseError with the fields its protocol parser sets,
 * wrapped in a QueryFailedError when a running statement failed, raw when a connection could not
 * be had; Node's socket errors; pg's and pg-pool's own messages, which carry no code.
 */
function serverError(severity: string, code: string, message: string): DatabaseError {
  return Object.assign(new DatabaseError(message, message.length, 'error'), { severity, code });
}

function ofStatement(driverError: Error): QueryFailedError {
  return new QueryFailedError('SELECT 1', [], driverError);
}

function socketError(code: string, syscall: string, message: string): Error {
  return Object.assign(new Error(message), { errno: -1, code, syscall });
}

describe('isPostgresUnavailable', () => {
  it.each<[string, unknown]>([
    [
      'a connection refused for max_connections',
      serverError('FATAL', '53300', 'sorry, too many clients already'),
    ],
    [
      'a connection over a role’s limit',
      serverError('FATAL', '53300', 'too many connections for role "app"'),
    ],
    ['a server starting up', serverError('FATAL', '57P03', 'the database system is starting up')],
    ['a server shutting down', serverError('FATAL', '57P03', 'the database system is shutting down')],
    [
      'a statement whose session was terminated',
      ofStatement(serverError('FATAL', '57P01', 'terminating connection due to administrator command')),
    ],
    [
      'a statement cut by a crash of another backend',
      ofStatement(
        serverError('FATAL', '57P02', 'terminating connection because of crash of another server process'),
      ),
    ],
    ['a connection exception (class 08)', serverError('ERROR', '08006', 'connection failure')],
    ['a role that may not log in', serverError('FATAL', '28000', 'role "app" is not permitted to log in')],
    ['a database gone', serverError('FATAL', '3D000', 'database "app" does not exist')],
    [
      'a database not accepting connections',
      serverError('FATAL', '55000', 'database "app" is not currently accepting connections'),
    ],
    [
      'a refused TCP connection',
      socketError('ECONNREFUSED', 'connect', 'connect ECONNREFUSED 127.0.0.1:5432'),
    ],
    [
      'a name whose every address refused',
      Object.assign(
        new AggregateError([
          socketError('ECONNREFUSED', 'connect', 'connect ECONNREFUSED ::1:5432'),
          socketError('ECONNREFUSED', 'connect', 'connect ECONNREFUSED 127.0.0.1:5432'),
        ]),
        { code: 'ECONNREFUSED' },
      ),
    ],
    [
      'a missing Unix socket',
      socketError('ENOENT', 'connect', 'connect ENOENT /run/postgresql/.s.PGSQL.5432'),
    ],
    [
      'a connect that timed out in the kernel',
      socketError('ETIMEDOUT', 'connect', 'connect ETIMEDOUT 10.0.0.1:5432'),
    ],
    [
      'a statement whose connection was reset',
      ofStatement(socketError('ECONNRESET', 'read', 'read ECONNRESET')),
    ],
    ['a statement whose connection closed', ofStatement(new Error('Connection terminated unexpectedly'))],
    [
      'a connection not made within connectionTimeoutMillis',
      new Error('Connection terminated due to connection timeout', {
        cause: new Error('Connection terminated unexpectedly'),
      }),
    ],
    ['a pool with no free connection in time', new Error('timeout exceeded when trying to connect')],
    [
      'a client that lost its socket before',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a query Postgres did not answer within the client-side bound', new PostgresQueryTimeoutError(45_000)],
  ])('is true for %s', (_case, error) => {
    expect(isPostgresUnavailable(error)).toBe(true);
  });

  it.each<[string, unknown]>([
    [
      'a unique violation',
      ofStatement(serverError('ERROR', '23505', 'duplicate key value violates unique constraint')),
    ],
    [
      'a value Postgres cannot read',
      ofStatement(serverError('ERROR', '22P02', 'invalid input syntax for type integer: "x"')),
    ],
    [
      'a statement cancelled by statement_timeout',
      ofStatement(serverError('ERROR', '57014', 'canceling statement due to statement timeout')),
    ],
    ['a serialization failure', ofStatement(serverError('ERROR', '40001', 'could not serialize access'))],
    [
      'a session ended because its request left a transaction idle',
      ofStatement(serverError('FATAL', '25P03', 'terminating connection due to idle-in-transaction timeout')),
    ],
    ['a missing file', socketError('ENOENT', 'open', "ENOENT: no such file or directory, open 'x'")],
    [
      'an outbound HTTP request that was refused',
      new TypeError('fetch failed', {
        cause: socketError('ECONNREFUSED', 'connect', 'connect ECONNREFUSED 127.0.0.1:80'),
      }),
    ],
    ['any other error', new Error('boom')],
    ['a thrown string', 'Connection terminated unexpectedly'],
    ['nothing', undefined],
  ])('is false for %s', (_case, error) => {
    expect(isPostgresUnavailable(error)).toBe(false);
  });
});
