import type { Pool } from 'pg';

/** `meta.storage` and `meta.utils.cursor`: JSON values per config and key, in Postgres. */
export class PluginStorage {
  constructor(private readonly pool: Pick<Pool, 'query'>) {}

  async get(pluginConfigId: number, key: string): Promise<unknown> {
    const { rows } = await this.pool.query<{ value: unknown }>(
      'SELECT value FROM plugin_storage WHERE plugin_config_id = $1 AND key = $2',
      [pluginConfigId, key],
    );
    return rows.length > 0 ? rows[0].value : null;
  }

  async set(pluginConfigId: number, key: string, value: unknown): Promise<void> {
    await this.pool.query(
      `INSERT INTO plugin_storage (plugin_config_id, key, value) VALUES ($1, $2, $3)
       ON CONFLICT (plugin_config_id, key) DO UPDATE SET value = EXCLUDED.value`,
      [pluginConfigId, key, JSON.stringify(value ?? null)],
    );
  }

  async del(pluginConfigId: number, key: string): Promise<void> {
    await this.pool.query('DELETE FROM plugin_storage WHERE plugin_config_id = $1 AND key = $2', [
      pluginConfigId,
      key,
    ]);
  }

  /** The cursor's value, creating it at `initial` when it does not exist yet. */
  async initCursor(pluginConfigId: number, key: string, initial: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO plugin_storage (plugin_config_id, key, value) VALUES ($1, $2, $3)
       ON CONFLICT (plugin_config_id, key) DO NOTHING`,
      [pluginConfigId, cursorKey(key), JSON.stringify(initial)],
    );
  }

  /** Adds `by` atomically and returns the new value (PostHog's cursor is an atomic counter too). */
  async incrementCursor(pluginConfigId: number, key: string, by: number): Promise<number> {
    const { rows } = await this.pool.query<{ value: number }>(
      `INSERT INTO plugin_storage (plugin_config_id, key, value) VALUES ($1, $2, to_jsonb($3::numeric))
       ON CONFLICT (plugin_config_id, key)
       DO UPDATE SET value = to_jsonb(COALESCE((plugin_storage.value #>> '{}')::numeric, 0) + $3::numeric)
       RETURNING (value #>> '{}')::float8 AS value`,
      [pluginConfigId, cursorKey(key), by],
    );
    return rows[0].value;
  }
}

/** Cursors share the storage table, under a prefix (an app could read one through `meta.storage`). */
function cursorKey(key: string): string {
  return `@cursor/${key}`;
}
