import { Client } from 'pg';

export interface TestDatabase {
  /** With the credentials of TEST_DATABASE_URL. */
  url: string;
  name: string;
  /** Safe to call twice. */
  drop(): Promise<void>;
}

let databasesCreated = 0;

/** Throws unless `name` contains `test`: helpers that create or drop databases never touch anything else. */
export function assertTestDatabaseName(name: string): void {
  if (!name.includes('test')) {
    throw new Error(`Refusing to create or drop database "${name}": its name does not contain "test"`);
  }
}

function readServerUrl(): URL {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) {
    throw new Error(
      'TEST_DATABASE_URL is not set. Run the tests through `npm test` (it starts PostgreSQL and sets it), ' +
        'or set it to a PostgreSQL URL whose role may CREATE DATABASE.',
    );
  }
  return new URL(serverUrl);
}

async function withServerClient<T>(serverUrl: URL, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serverUrl.toString() });
  try {
    await client.connect();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `Cannot connect to TEST_DATABASE_URL (${serverUrl.host}${serverUrl.pathname}): ${reason}`,
      {
        cause: error,
      },
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function dropDatabase(client: Client, name: string): Promise<void> {
  assertTestDatabaseName(name);
  // FORCE terminates sessions atomically with the drop: a reconnecting pool cannot make it fail.
  await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
}

/** On TEST_DATABASE_URL's server, named per jest worker, process and call. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = readServerUrl();
  databasesCreated += 1;
  const name = `hogbase_test_w${process.env.JEST_WORKER_ID ?? '0'}_${process.pid}_${databasesCreated}`;
  assertTestDatabaseName(name);

  await withServerClient(serverUrl, async (client) => {
    // A database left over from a crashed run with a recycled pid would make CREATE fail.
    await dropDatabase(client, name);
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  });

  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${name}`;

  return {
    url: databaseUrl.toString(),
    name,
    drop: () => withServerClient(serverUrl, (client) => dropDatabase(client, name)),
  };
}
