import type { PoolClient } from 'pg';

/** The one thing the repositories need from a connection: a client inside the batch transaction. */
export type Queryable = Pick<PoolClient, 'query'>;
