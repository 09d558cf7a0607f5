import { Injectable } from '@nestjs/common';
import type { Dashboard, FeatureFlag } from '@hogbase/postgres';
import { DashboardRepository } from '../dashboards/dashboard.repository';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { FeatureFlagRepository } from './feature-flag.repository';

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
  constructor(
    private readonly unitOfWork: UnitOfWork,
    private readonly dashboards: DashboardRepository,
    private readonly flags: FeatureFlagRepository,
  ) {}

  /** Creates the flag's usage dashboard and links it, in the caller's unit of work. */
  async create(flag: FeatureFlag): Promise<Dashboard> {
    const dashboard = await this.dashboards.insert({
      teamId: flag.teamId,
      name: `Generated Dashboard: ${flag.key} Usage`,
      description: `Usage of the feature flag ${flag.key}`,
      tiles: [...USAGE_TILES(flag.key), ...(flag.hasEnrichedAnalytics ? ENRICHED_TILES(flag.key) : [])],
      hasEnrichedAnalytics: flag.hasEnrichedAnalytics,
      createdById: flag.createdById,
    });
    flag.usageDashboardId = dashboard.id;
    await this.flags.update(flag.id, { usageDashboardId: dashboard.id });
    return dashboard;
  }

  /** `:id/dashboard/`: (re)creates the usage dashboard when it is gone; adds enriched tiles when due. */
  async ensure(flag: FeatureFlag): Promise<void> {
    await this.unitOfWork.run(async () => {
      const existing = flag.usageDashboardId ? await this.dashboards.findLive(flag.usageDashboardId) : null;
      if (!existing) {
        await this.create(flag);
        return;
      }
      if (flag.hasEnrichedAnalytics && !existing.hasEnrichedAnalytics) {
        await this.addEnrichedTiles(existing, flag.key);
      }
    });
  }

  /** `:id/enrich_usage_dashboard/`, once the caller knows enriched events exist. */
  async enrich(flag: FeatureFlag): Promise<EnrichOutcome> {
    return this.unitOfWork.run(async () => {
      const dashboard = flag.usageDashboardId ? await this.dashboards.findLive(flag.usageDashboardId) : null;
      if (!dashboard) return { success: false, error: 'Usage dashboard not found' };
      if (dashboard.hasEnrichedAnalytics)
        return { success: false, error: 'Usage dashboard already has enriched data' };
      await this.addEnrichedTiles(dashboard, flag.key);
      await this.flags.update(flag.id, { hasEnrichedAnalytics: true });
      return { success: true };
    });
  }

  private async addEnrichedTiles(dashboard: Dashboard, key: string): Promise<void> {
    dashboard.tiles = [...dashboard.tiles, ...ENRICHED_TILES(key)];
    dashboard.hasEnrichedAnalytics = true;
    await this.dashboards.save(dashboard);
  }
}
