import type { Pool, PoolClient } from 'pg';

/**
 * ROLLBACK when anything throws. TRICKY: pg-pool takes its own 'error' listener off a checked-out
 * client, and a connection dying meanwhile would then be an uncaught exception ending the process:
 * ours listens while the client is out. A broken client is released with the error, so the pool
 * closes it instead of handing it to the next batch.
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
    // release() puts the pool's idle listener back before ours comes off: never without one.
    client.release(connectionError ?? discard);
    client.removeListener('error', onError);
  }
}
