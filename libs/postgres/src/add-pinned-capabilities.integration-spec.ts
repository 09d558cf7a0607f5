import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { openDataSource, postgresDataSourceOptions } from './data-source.util';
import { AddPinnedCapabilities1764480000000 } from './migrations/1764480000000-AddPinnedCapabilities';
import { POSTGRES_ENGINES, startMigrationTestDatabase } from './testing/migration-test.util';

/** The migration on a database with a pinned config (another organization's app) and an own one. */
describe.each(POSTGRES_ENGINES)(
  'AddPinnedCapabilities on a database with pinned configs, on %s',
  (_name, engine) => {
    let url: string;
    let stop: () => Promise<void>;
    let client: Client;

    beforeAll(async () => {
      ({ url, client, stop } = await startMigrationTestDatabase(
        engine,
        'hogbase-add-pinned-capabilities-test-',
        AddPinnedCapabilities1764480000000,
      ));
    });

    afterAll(async () => {
      await stop?.();
    });

    it("gives a pinned config the app's capabilities, and none to a config that follows the app", async () => {
      const organizationId = randomUUID();
      await client.query('INSERT INTO organizations (id, name, slug) VALUES ($1, $2, $3)', [
        organizationId,
        'Pins',
        `pins-${randomBytes(3).toString('hex')}`,
      ]);
      const teamId = (
        await client.query<{ id: number }>(
          `INSERT INTO teams (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Web', $3) RETURNING id`,
          [randomUUID(), organizationId, `phc_${randomBytes(8).toString('hex')}`],
        )
      ).rows[0].id;
      const capabilities = { methods: ['onEvent'], jobs: [], scheduled_tasks: [] };
      const configs: number[] = [];
      for (const pinned of [true, false]) {
        const pluginId = (
          await client.query<{ id: number }>(
            `INSERT INTO plugins (organization_id, plugin_type, name, capabilities) VALUES ($1, 'source', 'Hook', $2) RETURNING id`,
            [organizationId, JSON.stringify(capabilities)],
          )
        ).rows[0].id;
        const inserted = await client.query<{ id: number }>(
          `INSERT INTO plugin_configs (plugin_id, team_id, enabled, web_token, code_pinned_at, pinned_code)
         VALUES ($1, $2, true, $3, $4, $5) RETURNING id`,
          [
            pluginId,
            teamId,
            randomBytes(16).toString('hex'),
            pinned ? new Date() : null,
            pinned ? 'exports.onEvent = () => {};' : null,
          ],
        );
        configs.push(inserted.rows[0].id);
      }

      await (await openDataSource({ url })).destroy();

      const { rows } = await client.query<{ id: number; pinned_capabilities: unknown }>(
        'SELECT id, pinned_capabilities FROM plugin_configs WHERE id = ANY($1) ORDER BY id',
        [configs],
      );
      expect(rows).toEqual([
        { id: configs[0], pinned_capabilities: capabilities },
        { id: configs[1], pinned_capabilities: null },
      ]);
    });

    it('drops the column again on the way down', async () => {
      const dataSource = new DataSource(postgresDataSourceOptions({ url }));
      await dataSource.initialize();
      const queryRunner = dataSource.createQueryRunner();
      const column = `SELECT 1 FROM information_schema.columns
      WHERE table_name = 'plugin_configs' AND column_name = 'pinned_capabilities'`;
      try {
        await new AddPinnedCapabilities1764480000000().down(queryRunner);
        expect((await client.query(column)).rows).toEqual([]);
        await new AddPinnedCapabilities1764480000000().up(queryRunner);
        expect((await client.query(column)).rows).toHaveLength(1);
      } finally {
        await queryRunner.release();
        await dataSource.destroy();
      }
    });
  },
);
