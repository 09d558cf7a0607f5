import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { insertProjectRows } from '@hogbase/test-support';
import { POSTGRES_ENGINES, startMigrationTestDatabase } from './testing/migration-test.util';

/**
 * persons.updated_at and person_distinct_ids.updated_at, which persons batch exports select by, are
 * kept by triggers: checked on the machine's Postgres and on the embedded engine of `npm start`.
 */
describe.each(POSTGRES_ENGINES)('updated_at of persons and distinct ids, on %s', (_name, engine) => {
  let stop: () => Promise<void>;
  let client: Client;

  beforeAll(async () => {
    ({ client, stop } = await startMigrationTestDatabase(engine, 'hogbase-updated-at-test-'));
  });

  afterAll(async () => {
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
    const { teamId: team } = await insertProjectRows(client, 'Stamps');
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
