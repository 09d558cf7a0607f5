import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { createTestDatabase } from '@hogbase/test-support';
import { openDataSource } from './data-source';
import { startTemporaryEmbeddedPostgres } from './testing/test-postgres.util';

/**
 * persons.updated_at and person_distinct_ids.updated_at, which persons batch exports select by, are
 * kept by triggers: checked on the machine's Postgres and on the embedded engine of `npm start`.
 */
describe.each([
  ['the machine Postgres', 'server'],
  ['the embedded Postgres (PGlite)', 'embedded'],
] as const)('updated_at of persons and distinct ids, on %s', (_name, engine) => {
  let url: string;
  let stop: () => Promise<void>;
  let client: Client;

  beforeAll(async () => {
    if (engine === 'server') {
      const database = await createTestDatabase();
      url = database.url;
      stop = () => database.drop();
    } else {
      const embedded = await startTemporaryEmbeddedPostgres('hogbase-updated-at-test-');
      url = embedded.url;
      stop = () => embedded.stop();
    }
    const dataSource = await openDataSource({ url });
    await dataSource.destroy();
    client = new Client({ connectionString: url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await stop?.();
  });

  async function updatedAt(table: 'persons' | 'person_distinct_ids', where: string, value: unknown) {
    const { rows } = await client.query<{ updated_at: Date }>(
      `SELECT updated_at FROM ${table} WHERE ${where} = $1`,
      [value],
    );
    return rows[0].updated_at.getTime();
  }

  it('stamps every insert and update, whatever value the writer gives', async () => {
    const organization = randomUUID();
    await client.query(`INSERT INTO organizations (id, name, slug) VALUES ($1, 'Stamps', $2)`, [
      organization,
      `stamps-${randomBytes(3).toString('hex')}`,
    ]);
    const team = (
      await client.query<{ id: number }>(
        `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Web', $3) RETURNING id`,
        [randomUUID(), organization, `phc_${randomBytes(8).toString('hex')}`],
      )
    ).rows[0].id;
    const before = Date.now() - 5_000;
    const person = (
      await client.query<{ id: string }>(
        `INSERT INTO persons (uuid, team_id, updated_at) VALUES ($1, $2, '2000-01-01') RETURNING id`,
        [randomUUID(), team],
      )
    ).rows[0].id;
    await client.query(
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at) VALUES ($1, 'visitor', $2, '2000-01-01')`,
      [team, person],
    );
    const personInserted = await updatedAt('persons', 'id', person);
    const distinctIdInserted = await updatedAt('person_distinct_ids', 'distinct_id', 'visitor');
    expect(personInserted).toBeGreaterThan(before);
    expect(distinctIdInserted).toBeGreaterThan(before);

    // Later writes move the stamps forward (a pause so that even a millisecond clock moves).
    await new Promise((resolve) => setTimeout(resolve, 20));
    await client.query(
      `UPDATE persons SET properties = '{"plan":"pro"}', updated_at = '2000-01-01' WHERE id = $1`,
      [person],
    );
    await client.query(`UPDATE person_distinct_ids SET version = version + 1 WHERE distinct_id = 'visitor'`);
    expect(await updatedAt('persons', 'id', person)).toBeGreaterThan(personInserted);
    expect(await updatedAt('person_distinct_ids', 'distinct_id', 'visitor')).toBeGreaterThan(
      distinctIdInserted,
    );
  });
});
