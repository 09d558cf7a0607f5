import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Dashboard, FeatureFlag } from '@hogbase/postgres';

/** The insight a usage-dashboard tile shows: a trend of the flag's events, as PostHog generates it. */
function trendTile(name: string, event: string, key: string, math: string, breakdown: string | null) {
  return {
    name,
    query: {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event, math }],
      properties: [
        {
          key: event === '$feature_flag_called' ? '$feature_flag' : 'feature_flag',
          value: key,
          operator: 'exact',
          type: 'event',
        },
      ],
      breakdownFilter: breakdown ? { breakdown, breakdown_type: 'event' } : null,
      dateRange: { date_from: '-30d' },
      interval: 'day',
    },
  };
}

export const USAGE_TILES = (key: string) => [
  trendTile('Flag calls made', '$feature_flag_called', key, 'total', '$feature_flag_response'),
  trendTile('Unique users per variant', '$feature_flag_called', key, 'dau', '$feature_flag_response'),
];

/** Shown once the flag's feature reports $feature_view / $feature_interaction events. */
export const ENRICHED_TILES = (key: string) => [
  trendTile('Feature views', '$feature_view', key, 'dau', null),
  trendTile('Feature interactions', '$feature_interaction', key, 'dau', null),
];

export type EnrichOutcome =
  | { success: true }
  | { success: false; error: 'Usage dashboard not found' | 'Usage dashboard already has enriched data' };

/** A flag's generated usage dashboard ("Generated Dashboard: <key> Usage"). */
@Injectable()
export class UsageDashboardService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Creates the flag's usage dashboard and links it. */
  async create(manager: EntityManager, flag: FeatureFlag): Promise<Dashboard> {
    const repository = manager.getRepository(Dashboard);
    const dashboard = await repository.save(
      repository.create({
        teamId: flag.teamId,
        name: `Generated Dashboard: ${flag.key} Usage`,
        description: `Usage of the feature flag ${flag.key}`,
        tiles: [...USAGE_TILES(flag.key), ...(flag.hasEnrichedAnalytics ? ENRICHED_TILES(flag.key) : [])],
        hasEnrichedAnalytics: flag.hasEnrichedAnalytics,
        createdById: flag.createdById,
      }),
    );
    flag.usageDashboardId = dashboard.id;
    await manager.getRepository(FeatureFlag).update({ id: flag.id }, { usageDashboardId: dashboard.id });
    return dashboard;
  }

  /** `:id/dashboard/`: (re)creates the usage dashboard when it is gone; adds enriched tiles when due. */
  async ensure(flag: FeatureFlag): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const existing = flag.usageDashboardId
        ? await manager.getRepository(Dashboard).findOneBy({ id: flag.usageDashboardId, deleted: false })
        : null;
      if (!existing) {
        await this.create(manager, flag);
        return;
      }
      if (flag.hasEnrichedAnalytics && !existing.hasEnrichedAnalytics) {
        await this.addEnrichedTiles(manager, existing, flag.key);
      }
    });
  }

  /** `:id/enrich_usage_dashboard/`, once the caller knows enriched events exist. */
  async enrich(flag: FeatureFlag): Promise<EnrichOutcome> {
    return this.dataSource.transaction(async (manager) => {
      const dashboard = flag.usageDashboardId
        ? await manager.getRepository(Dashboard).findOneBy({ id: flag.usageDashboardId, deleted: false })
        : null;
      if (!dashboard) return { success: false, error: 'Usage dashboard not found' };
      if (dashboard.hasEnrichedAnalytics)
        return { success: false, error: 'Usage dashboard already has enriched data' };
      await this.addEnrichedTiles(manager, dashboard, flag.key);
      await manager.getRepository(FeatureFlag).update({ id: flag.id }, { hasEnrichedAnalytics: true });
      return { success: true };
    });
  }

  private async addEnrichedTiles(manager: EntityManager, dashboard: Dashboard, key: string): Promise<void> {
    dashboard.tiles = [...dashboard.tiles, ...ENRICHED_TILES(key)];
    dashboard.hasEnrichedAnalytics = true;
    await manager.getRepository(Dashboard).save(dashboard);
  }
}
