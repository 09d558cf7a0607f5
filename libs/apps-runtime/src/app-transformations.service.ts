import type { Pool } from 'pg';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import type { SandboxJson } from '@hogbase/apps-sandbox';
import type { CapturedEvent, RawEvent } from '@hogbase/event-contract';
import { AppSkippedError, messageOf } from './app-instance.service';
import { RUN_CAPABILITIES, type EnabledApps } from './enabled-apps.cache';

/** PostHog's PluginEvent. */
interface PluginEvent {
  uuid: string;
  event: string;
  distinct_id: string;
  team_id: number;
  ip: string | null;
  site_url: string;
  now: string;
  sent_at: string | null;
  timestamp: string;
  properties: Record<string, unknown>;
  $set?: Record<string, unknown>;
  $set_once?: Record<string, unknown>;
}

const TEAMS_REFRESH_MS = 5_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * `processEvent` of a project's apps in config order, before persons. Null drops the event; a throw
 * is logged and the event goes on as it was before that app.
 */
export class AppTransformations {
  private readonly outcomes: Counter<'outcome'>;
  private cache: { teams: Set<number>; loadedAt: number } | undefined;
  private loading: Promise<Set<number>> | undefined;

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly apps: EnabledApps,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    this.outcomes = new Counter({
      name: 'app_transformations_total',
      help: 'processEvent calls of pipeline apps, by outcome (transformed, dropped, skipped, failed)',
      labelNames: ['outcome'],
      registers: [registry],
    });
  }

  /** By the capabilities of the code each config runs (its pinned copy's for another organization's app). */
  async transformationTeams(): Promise<ReadonlySet<number>> {
    if (this.cache && Date.now() - this.cache.loadedAt < TEAMS_REFRESH_MS) return this.cache.teams;
    this.loading ??= this.pool
      .query<{ team_id: number }>(
        `SELECT DISTINCT c.team_id FROM plugin_configs c JOIN plugins p ON p.id = c.plugin_id
         WHERE c.enabled AND NOT c.deleted AND (${RUN_CAPABILITIES} -> 'methods') ? 'processEvent'`,
      )
      .then(({ rows }) => {
        const teams = new Set(rows.map((row) => row.team_id));
        this.cache = { teams, loadedAt: Date.now() };
        return teams;
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  async transform(captured: CapturedEvent): Promise<CapturedEvent | null> {
    let raw: RawEvent;
    try {
      const parsed: unknown = JSON.parse(captured.data);
      if (!isObject(parsed)) return captured;
      raw = parsed;
    } catch {
      return captured; // ingestion dead-letters it with its reason
    }
    let event = toPluginEvent(captured, raw);
    let changed = false;
    for (const instance of await this.apps.forTeam(captured.team_id)) {
      if (!(await instance.has('processEvent'))) continue;
      try {
        const result = await instance.call('processEvent', event as unknown as SandboxJson);
        if (result === null || result === undefined) {
          this.outcomes.inc({ outcome: 'dropped' });
          return null;
        }
        if (!isObject(result) || typeof result.event !== 'string' || !isObject(result.properties ?? {})) {
          throw new Error('processEvent must return the event (an object with event and properties) or null');
        }
        event = { ...event, ...(result as Partial<PluginEvent>) };
        changed = true;
        this.outcomes.inc({ outcome: 'transformed' });
      } catch (error) {
        // Backing off after timeouts: AppInstance logs one line for all the calls skipped.
        if (error instanceof AppSkippedError) {
          this.outcomes.inc({ outcome: 'skipped' });
          continue;
        }
        this.outcomes.inc({ outcome: 'failed' });
        instance.logLine('ERROR', `processEvent failed for event ${captured.uuid}: ${messageOf(error)}`);
        this.logger.debug(
          { pluginConfigId: instance.app.pluginConfigId, err: messageOf(error) },
          'processEvent failed',
        );
      }
    }
    return changed ? fromPluginEvent(captured, raw, event) : captured;
  }
}

function toPluginEvent(captured: CapturedEvent, raw: RawEvent): PluginEvent {
  return {
    uuid: captured.uuid,
    event: captured.event,
    distinct_id: captured.distinct_id,
    team_id: captured.team_id,
    ip: captured.ip,
    site_url: '',
    now: captured.now,
    sent_at: captured.sent_at,
    timestamp: captured.timestamp,
    properties: isObject(raw.properties) ? raw.properties : {},
    ...(isObject(raw.$set) ? { $set: raw.$set } : {}),
    ...(isObject(raw.$set_once) ? { $set_once: raw.$set_once } : {}),
  };
}

/** With what the apps changed (name, distinct id, properties, $set, $set_once). */
function fromPluginEvent(captured: CapturedEvent, raw: RawEvent, event: PluginEvent): CapturedEvent {
  const distinctId = String(event.distinct_id ?? captured.distinct_id).slice(0, 200);
  const data: RawEvent = {
    ...raw,
    event: event.event,
    distinct_id: distinctId,
    properties: isObject(event.properties) ? event.properties : {},
  };
  if (isObject(event.$set)) data.$set = event.$set;
  if (isObject(event.$set_once)) data.$set_once = event.$set_once;
  return {
    ...captured,
    event: event.event.slice(0, 200),
    distinct_id: distinctId,
    data: JSON.stringify(data),
  };
}
