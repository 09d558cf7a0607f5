import { postgresPoolTimeouts } from '@hogbase/postgres';
import { CAPTURE_POOL_TIMEOUTS } from './postgres-pool.util';

describe('the capture pool timeouts', () => {
  it('are the bounds of every other Postgres pool, but for a shorter wait for a connection', () => {
    expect({ ...CAPTURE_POOL_TIMEOUTS, connectionTimeoutMillis: undefined }).toEqual({
      ...postgresPoolTimeouts(),
      connectionTimeoutMillis: undefined,
    });
    expect(CAPTURE_POOL_TIMEOUTS.connectionTimeoutMillis).toBeLessThan(
      postgresPoolTimeouts().connectionTimeoutMillis!,
    );
  });
});
