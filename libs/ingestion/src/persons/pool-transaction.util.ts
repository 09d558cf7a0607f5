import type { Pool, PoolClient } from 'pg';

/**
 * Runs `work` inside one transaction on a client checked out of `pool`: `begin` (which must open
 * the transaction), then `work`, then COMMIT; ROLLBACK when anything throws, and the error is
 * rethrown.
 *
 * TRICKY: pg-pool takes its own 'error' listener off a client while the client is checked out. A
 * connection that dies meanwhile (pg_terminate_backend, a Postgres restart or crash, a network cut)
 * makes the client emit 'error', and an 'error' event nobody listens to is an uncaught exception
 * that ends the process. So the client has our listener for as long as it is out; the query in
 * flight fails on its own and the caller sees that error.
 *
 * A client whose connection failed, or that could not roll back, is released with the error: the
 * pool closes it instead of handing a broken connection to the next batch.
 */
export async function inPoolTransaction<T>(
  pool: Pool,
  begin: string,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let connectionError: Error | undefined;
  const onError = (error: Error) => {
    connectionError ??= error;
  };
  client.on('error', onError);
  let discard: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (!connectionError) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        discard = rollbackError instanceof Error ? rollbackError : new Error('ROLLBACK failed');
      });
    }
    throw error;
  } finally {
    // release() puts the pool's idle listener back before ours comes off: the client is never
    // without one.
    client.release(connectionError ?? discard);
    client.removeListener('error', onError);
  }
}
