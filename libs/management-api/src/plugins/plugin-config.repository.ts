import { Injectable } from '@nestjs/common';
import type { DeepPartial } from 'typeorm';
import { Plugin, PluginConfig, Team } from '@hogbase/postgres';
import type { PageRequest } from '../common/pagination.util';
import { UnitOfWork } from '../persistence/unit-of-work.service';

/** The server entry as the apps runtime picks it and `site.ts` as capture serves it. */
const CURRENT_CODE = `
  LEFT JOIN LATERAL (
    SELECT f.transpiled FROM plugin_source_files f
    WHERE f.plugin_id = p.id AND f.status = 'TRANSPILED' AND f.filename NOT IN ('site.ts', 'frontend.tsx')
    ORDER BY f.filename IN ('index.ts', 'index.js') DESC, f.filename
    LIMIT 1
  ) entry ON true
  LEFT JOIN LATERAL (
    SELECT f.transpiled FROM plugin_source_files f
    WHERE f.plugin_id = p.id AND f.filename = 'site.ts' AND f.status = 'TRANSPILED'
  ) site ON true`;

@Injectable()
export class PluginConfigRepository {
  constructor(private readonly unitOfWork: UnitOfWork) {}

  findLiveInProject(teamId: number, id: number, lock = false): Promise<PluginConfig | null> {
    return this.unitOfWork.repository(PluginConfig).findOne({
      where: { id, teamId, deleted: false },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  pageLiveInProject(teamId: number, page: PageRequest): Promise<[PluginConfig[], number]> {
    return this.unitOfWork.repository(PluginConfig).findAndCount({
      where: { teamId, deleted: false },
      order: { order: 'ASC', pluginId: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
  }

  /**
   * Holds the slot until the transaction ends so two creates cannot both find it free (PostHog's
   * unique plugin/team counts deleted configs; here they do not).
   */
  async lockSlot(pluginId: number, teamId: number): Promise<void> {
    await this.unitOfWork.manager.query('SELECT pg_advisory_xact_lock($1, $2)', [pluginId, teamId]);
  }

  existsLive(pluginId: number, teamId: number): Promise<boolean> {
    return this.unitOfWork.repository(PluginConfig).exists({ where: { pluginId, teamId, deleted: false } });
  }

  build(fields: DeepPartial<PluginConfig>): PluginConfig {
    return this.unitOfWork.repository(PluginConfig).create(fields);
  }

  save(config: PluginConfig): Promise<PluginConfig> {
    return this.unitOfWork.repository(PluginConfig).save(config);
  }

  /** PostHog's exports_unsubscribe_configs: enabled, except global transformations and site apps. */
  listExportsToUnsubscribe(organizationId: string): Promise<PluginConfig[]> {
    return this.unitOfWork
      .repository(PluginConfig)
      .createQueryBuilder('config')
      .innerJoin(Team, 'team', 'team.id = config.team_id')
      .innerJoin(Plugin, 'plugin', 'plugin.id = config.plugin_id')
      .where('team.organization_id = :organizationId', { organizationId })
      .andWhere('config.enabled AND NOT config.deleted')
      .andWhere(
        `NOT (plugin.is_global AND (plugin.capabilities -> 'methods' @> '["processEvent"]'::jsonb OR plugin.capabilities = '{}'::jsonb))`,
      )
      .andWhere(`NOT (plugin.plugin_type = 'local' AND plugin.capabilities = '{}'::jsonb)`)
      .orderBy('config.id', 'ASC')
      .getMany();
  }

  /** Over the last 24 hours; no entry when nothing was delivered. */
  async deliveryRates(ids: number[]): Promise<Map<number, number>> {
    const rows: { plugin_config_id: number; succeeded: string; failed: string }[] =
      await this.unitOfWork.manager.query(
        `SELECT plugin_config_id, sum(succeeded) AS succeeded, sum(failed) AS failed FROM plugin_delivery_stats
       WHERE plugin_config_id = ANY($1) AND hour >= now() - interval '24 hours' GROUP BY plugin_config_id`,
        [ids],
      );
    const rates = new Map<number, number>();
    for (const row of rows) {
      const total = Number(row.succeeded) + Number(row.failed);
      if (total > 0) rates.set(row.plugin_config_id, Number(row.succeeded) / total);
    }
    return rates;
  }

  /** Capabilities are pinned too: they decide whether ingestion calls the pinned code at all. */
  async pinCurrentCode(config: PluginConfig, at: Date): Promise<void> {
    const manager = this.unitOfWork.manager;
    await manager.query(
      `UPDATE plugin_configs c
       SET code_pinned_at = $2, updated_at = $2, pinned_code = entry.transpiled,
           pinned_site_code = site.transpiled, pinned_config_schema = p.config_schema,
           pinned_capabilities = p.capabilities
       FROM plugins p ${CURRENT_CODE}
       WHERE p.id = c.plugin_id AND c.id = $1`,
      [config.id, at],
    );
    const [{ pinned_config_schema }] = await manager.query<{ pinned_config_schema: unknown }[]>(
      'SELECT pinned_config_schema FROM plugin_configs WHERE id = $1',
      [config.id],
    );
    config.codePinnedAt = at;
    config.updatedAt = at;
    config.pinnedConfigSchema = pinned_config_schema;
  }

  /** Pinned configs whose app's code, site code or schema has changed since. */
  async idsWithCodeUpdates(configs: PluginConfig[]): Promise<Set<number>> {
    const pinned = configs.filter((config) => config.codePinnedAt).map((config) => config.id);
    if (pinned.length === 0) return new Set();
    const rows = await this.unitOfWork.manager.query<{ id: number }[]>(
      `SELECT c.id FROM plugin_configs c JOIN plugins p ON p.id = c.plugin_id ${CURRENT_CODE}
       WHERE c.id = ANY($1) AND c.code_pinned_at IS NOT NULL
         AND (c.pinned_code IS DISTINCT FROM entry.transpiled
           OR c.pinned_site_code IS DISTINCT FROM site.transpiled
           OR c.pinned_config_schema IS DISTINCT FROM p.config_schema)`,
      [pinned],
    );
    return new Set(rows.map((row) => row.id));
  }
}
