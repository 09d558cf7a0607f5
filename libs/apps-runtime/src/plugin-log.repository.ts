import type { Logger } from 'pino';
import type { Pool } from 'pg';

export type PluginLogSource = 'SYSTEM' | 'PLUGIN' | 'CONSOLE';
export type PluginLogType = 'DEBUG' | 'LOG' | 'INFO' | 'WARN' | 'ERROR';

export interface PluginLogLine {
  pluginConfigId: number;
  pluginId: number;
  teamId: number;
  source: PluginLogSource;
  type: PluginLogType;
  message: string;
}

interface DeliveryCounts {
  succeeded: number;
  failed: number;
  lastError: string | undefined;
}

const FLUSH_INTERVAL_MS = 1_000;
const MAX_BUFFERED_LINES = 10_000;
const MAX_MESSAGE_LENGTH = 10_000;

/** One insert a second, not one per event; a full buffer drops lines and counts the drop in the next. */
export class PluginLogWriter {
  private lines: (PluginLogLine & { timestamp: Date })[] = [];
  private deliveries = new Map<number, DeliveryCounts>();
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly logger: Logger,
    private readonly instanceId: string,
  ) {}

  log(line: PluginLogLine): void {
    if (this.lines.length >= MAX_BUFFERED_LINES) {
      this.dropped += 1;
      return;
    }
    this.lines.push({ ...line, message: line.message.slice(0, MAX_MESSAGE_LENGTH), timestamp: new Date() });
    this.schedule();
  }

  /** For the config's `delivery_rate_24h` and last error. */
  countDelivery(pluginConfigId: number, outcome: { ok: true } | { ok: false; error: string }): void {
    const counts = this.deliveries.get(pluginConfigId) ?? { succeeded: 0, failed: 0, lastError: undefined };
    if (outcome.ok) counts.succeeded += 1;
    else {
      counts.failed += 1;
      counts.lastError = outcome.error.slice(0, MAX_MESSAGE_LENGTH);
    }
    this.deliveries.set(pluginConfigId, counts);
    this.schedule();
  }

  /** Logs are best effort: a Postgres failure keeps nothing back, but is logged. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, FLUSH_INTERVAL_MS);
  }

  private async write(): Promise<void> {
    const lines = this.lines;
    const deliveries = this.deliveries;
    const dropped = this.dropped;
    this.lines = [];
    this.deliveries = new Map();
    this.dropped = 0;
    try {
      if (lines.length > 0) {
        await this.pool.query(
          `INSERT INTO plugin_log_entries
             (plugin_config_id, plugin_id, team_id, timestamp, source, type, message, instance_id)
           SELECT config_id, plugin_id, team_id, ts, source, type,
                  CASE WHEN ord = 1 AND $8::int > 0 THEN message || ' (' || $8 || ' earlier lines dropped)' ELSE message END,
                  $9
           FROM unnest($1::int[], $2::int[], $3::int[], $4::timestamptz[], $5::text[], $6::text[], $7::text[])
             WITH ORDINALITY AS line(config_id, plugin_id, team_id, ts, source, type, message, ord)
           WHERE EXISTS (SELECT 1 FROM plugin_configs WHERE id = config_id)`,
          [
            lines.map((line) => line.pluginConfigId),
            lines.map((line) => line.pluginId),
            lines.map((line) => line.teamId),
            lines.map((line) => line.timestamp),
            lines.map((line) => line.source),
            lines.map((line) => line.type),
            lines.map((line) => line.message),
            dropped,
            this.instanceId,
          ],
        );
      }
      if (deliveries.size > 0) {
        const entries = [...deliveries.entries()];
        await this.pool.query(
          `INSERT INTO plugin_delivery_stats (plugin_config_id, hour, succeeded, failed, last_error, last_error_at)
           SELECT config_id, date_trunc('hour', now()), succeeded, failed, last_error,
                  CASE WHEN last_error IS NULL THEN NULL ELSE now() END
           FROM unnest($1::int[], $2::bigint[], $3::bigint[], $4::text[])
             AS counts(config_id, succeeded, failed, last_error)
           WHERE EXISTS (SELECT 1 FROM plugin_configs WHERE id = config_id)
           ON CONFLICT (plugin_config_id, hour) DO UPDATE SET
             succeeded = plugin_delivery_stats.succeeded + EXCLUDED.succeeded,
             failed = plugin_delivery_stats.failed + EXCLUDED.failed,
             last_error = COALESCE(EXCLUDED.last_error, plugin_delivery_stats.last_error),
             last_error_at = COALESCE(EXCLUDED.last_error_at, plugin_delivery_stats.last_error_at)`,
          [
            entries.map(([id]) => id),
            entries.map(([, counts]) => counts.succeeded),
            entries.map(([, counts]) => counts.failed),
            entries.map(([, counts]) => counts.lastError ?? null),
          ],
        );
      }
    } catch (error) {
      this.logger.warn(
        { err: error, lines: lines.length, configs: deliveries.size },
        'pipeline app log lines and delivery counts not written',
      );
    }
  }
}
