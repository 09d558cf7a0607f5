import type { Pool } from 'pg';

export interface PluginStorageLimits {
  /** As `plugin_storage_usage` counts them. */
  maxBytesPerConfig: number;
  maxValueBytes: number;
}

/** PostHog's `plugin_storage.key` is a varchar(200). */
const MAX_KEY_LENGTH = 200;

const DEFAULT_LIMITS: PluginStorageLimits = {
  maxBytesPerConfig: 10 * 1024 * 1024,
  maxValueBytes: 1024 * 1024,
};

/** The same sum the usage trigger keeps. */
const ROW_BYTES = 'octet_length(s.key) + octet_length(s.value::text)';

/**
 * `meta.storage` and `meta.utils.cursor`. A trigger keeps each config's total, so a write reads one
 * row. NOTE: concurrent writes may pass the budget by what they add; the next write is refused.
 */
export class PluginStorage {
  private readonly limits: PluginStorageLimits;

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    limits: Partial<PluginStorageLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  async get(pluginConfigId: number, key: string): Promise<unknown> {
    const { rows } = await this.pool.query<{ value: unknown }>(
      'SELECT value FROM plugin_storage WHERE plugin_config_id = $1 AND key = $2',
      [pluginConfigId, key],
    );
    return rows.length > 0 ? rows[0].value : null;
  }

  async set(pluginConfigId: number, key: string, value: unknown): Promise<void> {
    checkKey(key);
    const json = JSON.stringify(value ?? null);
    const size = Buffer.byteLength(json);
    if (size > this.limits.maxValueBytes) {
      throw new Error(
        `meta.storage refused a value of ${size} bytes: the largest is ${this.limits.maxValueBytes} bytes (APPS_STORAGE_VALUE_MAX_KB)`,
      );
    }
    const { rowCount } = await this.pool.query(
      `INSERT INTO plugin_storage (plugin_config_id, key, value)
       SELECT $1::int, $2::text, $3::jsonb
       WHERE COALESCE((SELECT bytes FROM plugin_storage_usage WHERE plugin_config_id = $1::int), 0)
             - COALESCE((SELECT ${ROW_BYTES} FROM plugin_storage s WHERE s.plugin_config_id = $1::int AND s.key = $2::text), 0)
             + octet_length($2::text) + octet_length($3::jsonb::text) <= $4::bigint
       ON CONFLICT (plugin_config_id, key) DO UPDATE SET value = EXCLUDED.value`,
      [pluginConfigId, key, json, this.limits.maxBytesPerConfig],
    );
    if (rowCount === 0) throw await this.fullError(pluginConfigId);
  }

  async del(pluginConfigId: number, key: string): Promise<void> {
    await this.pool.query('DELETE FROM plugin_storage WHERE plugin_config_id = $1 AND key = $2', [
      pluginConfigId,
      key,
    ]);
  }

  /** Created at `initial` when it does not exist yet. */
  async initCursor(pluginConfigId: number, key: string, initial: number): Promise<void> {
    checkKey(key);
    const { rows } = await this.pool.query<{ ok: boolean }>(
      `WITH present AS (
         SELECT 1 FROM plugin_storage WHERE plugin_config_id = $1::int AND key = $2::text
       ), inserted AS (
         INSERT INTO plugin_storage (plugin_config_id, key, value)
         SELECT $1::int, $2::text, $3::jsonb
         WHERE NOT EXISTS (SELECT 1 FROM present)
           AND COALESCE((SELECT bytes FROM plugin_storage_usage WHERE plugin_config_id = $1::int), 0)
               + octet_length($2::text) + octet_length($3::jsonb::text) <= $4::bigint
         ON CONFLICT (plugin_config_id, key) DO NOTHING
         RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM present) OR EXISTS (SELECT 1 FROM inserted) AS ok`,
      [pluginConfigId, cursorKey(key), JSON.stringify(initial), this.limits.maxBytesPerConfig],
    );
    if (!rows[0]?.ok) throw await this.fullError(pluginConfigId);
  }

  /** Atomic, as PostHog's cursor. */
  async incrementCursor(pluginConfigId: number, key: string, by: number): Promise<number> {
    checkKey(key);
    // An existing cursor always moves; a new one needs room.
    const { rows } = await this.pool.query<{ value: number }>(
      `INSERT INTO plugin_storage (plugin_config_id, key, value)
       SELECT $1::int, $2::text, to_jsonb($3::numeric)
       WHERE EXISTS (SELECT 1 FROM plugin_storage WHERE plugin_config_id = $1::int AND key = $2::text)
          OR COALESCE((SELECT bytes FROM plugin_storage_usage WHERE plugin_config_id = $1::int), 0)
             + octet_length($2::text) + octet_length(to_jsonb($3::numeric)::text) <= $4::bigint
       ON CONFLICT (plugin_config_id, key)
       DO UPDATE SET value = to_jsonb(COALESCE((plugin_storage.value #>> '{}')::numeric, 0) + $3::numeric)
       RETURNING (value #>> '{}')::float8 AS value`,
      [pluginConfigId, cursorKey(key), by, this.limits.maxBytesPerConfig],
    );
    if (rows.length === 0) throw await this.fullError(pluginConfigId);
    return rows[0].value;
  }

  private async fullError(pluginConfigId: number): Promise<Error> {
    const { rows } = await this.pool.query<{ bytes: string }>(
      'SELECT bytes FROM plugin_storage_usage WHERE plugin_config_id = $1',
      [pluginConfigId],
    );
    const used = rows[0]?.bytes ?? '0';
    return new Error(
      `meta.storage is full: this config's keys hold ${used} of its ${this.limits.maxBytesPerConfig} bytes (APPS_STORAGE_MB_PER_CONFIG); delete keys to make room`,
    );
  }
}

function checkKey(key: string): void {
  if (key.length > MAX_KEY_LENGTH) {
    throw new Error(
      `meta.storage keys are at most ${MAX_KEY_LENGTH} characters (this one has ${key.length})`,
    );
  }
}

/** Cursors share the storage table under a prefix. */
function cursorKey(key: string): string {
  return `@cursor/${key}`;
}
