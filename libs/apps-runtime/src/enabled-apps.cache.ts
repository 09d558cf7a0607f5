import type { Pool } from 'pg';
import type { Logger } from 'pino';
import {
  SandboxAppError,
  SandboxMemoryError,
  SandboxTimeoutError,
  type SandboxJson,
} from '@hogbase/apps-sandbox';
import { AppInstance, messageOf, type AppDefinition, type AppServices } from './app-instance.service';

export interface SecretOpener {
  open(sealed: string): Promise<string>;
}

interface ConfigRow {
  id: number;
  plugin_id: number;
  team_id: number;
  config: Record<string, unknown>;
  name: string;
  metrics: Record<string, string> | null;
  code: string | null;
  version: string;
}

/**
 * SECURITY: a config with `code_pinned_at` (another organization's app) runs the copy its admin
 * enabled or upgraded to: the app's organization cannot change what runs on this project's events
 * and secrets. Others run the app's latest entry (as plugin-config.repository.ts copies it).
 */
const CONFIG_SELECT = `
  SELECT c.id, c.plugin_id, c.team_id, c.config, p.name, p.metrics,
         CASE WHEN c.code_pinned_at IS NULL THEN code.transpiled ELSE c.pinned_code END AS code,
         CASE WHEN c.code_pinned_at IS NULL
           THEN concat_ws('/', c.updated_at, p.updated_at, code.updated_at)
           ELSE concat_ws('/', c.updated_at, c.code_pinned_at)
         END AS version
  FROM plugin_configs c
  JOIN plugins p ON p.id = c.plugin_id
  LEFT JOIN LATERAL (
    SELECT f.transpiled, f.updated_at FROM plugin_source_files f
    WHERE c.code_pinned_at IS NULL
      AND f.plugin_id = p.id AND f.status = 'TRANSPILED' AND f.filename NOT IN ('site.ts', 'frontend.tsx')
    ORDER BY f.filename IN ('index.ts', 'index.js') DESC, f.filename
    LIMIT 1
  ) code ON true
  WHERE c.enabled AND NOT c.deleted`;

/** A pinned config's are its copy's: the app's current version may have dropped or added a method. */
export const RUN_CAPABILITIES =
  'CASE WHEN c.code_pinned_at IS NULL THEN p.capabilities ELSE c.pinned_capabilities END';

const TEAM_REFRESH_MS = 10_000;

/** No ENCRYPTION_KEYS, or another key: it fails until the config changes. */
class ConfigValueError extends Error {}

/**
 * The app's own code failed to load or set up, or a secret cannot be opened: it comes back until the
 * code or config changes. Anything else (the budget, a thread that died, Postgres) passes.
 */
function lastingFailure(error: unknown): boolean {
  return (
    error instanceof SandboxAppError ||
    error instanceof SandboxTimeoutError ||
    error instanceof SandboxMemoryError ||
    error instanceof ConfigValueError
  );
}

interface TeamApps {
  loadedAt: number;
  loading: Promise<AppInstance[]> | undefined;
  instances: AppInstance[];
}

/** An app whose code or config changed is replaced (`teardownPlugin` first); one that fails to start is left out. */
export class EnabledApps {
  private readonly teams = new Map<number, TeamApps>();
  private readonly running = new Map<number, AppInstance>();
  private readonly failedVersions = new Map<number, string>();

  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    private readonly services: AppServices,
    private readonly secrets: SecretOpener | undefined,
    private readonly logger: Logger,
  ) {}

  /** In config order. */
  async forTeam(teamId: number): Promise<AppInstance[]> {
    let team = this.teams.get(teamId);
    if (!team) {
      team = { loadedAt: 0, loading: undefined, instances: [] };
      this.teams.set(teamId, team);
    }
    if (Date.now() - team.loadedAt < TEAM_REFRESH_MS) return team.instances;
    const current = team;
    current.loading ??= this.loadTeam(teamId)
      .then((instances) => {
        current.instances = instances;
        current.loadedAt = Date.now();
        return instances;
      })
      .finally(() => {
        current.loading = undefined;
      });
    return current.loading;
  }

  /** Import apps: the job names the config. Undefined when disabled or gone. */
  async forConfig(pluginConfigId: number): Promise<AppInstance | undefined> {
    const { rows } = await this.pool.query<ConfigRow>(`${CONFIG_SELECT} AND c.id = $1`, [pluginConfigId]);
    if (rows.length === 0) {
      await this.retire(pluginConfigId);
      return undefined;
    }
    return this.instanceFor(rows[0]);
  }

  async stop(): Promise<void> {
    const instances = [...this.running.values()];
    this.running.clear();
    this.teams.clear();
    await Promise.all(instances.map((instance) => instance.stop()));
  }

  private async loadTeam(teamId: number): Promise<AppInstance[]> {
    const { rows } = await this.pool.query<ConfigRow>(
      `${CONFIG_SELECT} AND c.team_id = $1 ORDER BY c."order", c.id`,
      [teamId],
    );
    const enabled = new Set(rows.map((row) => row.id));
    for (const [id, instance] of this.running) {
      if (instance.app.teamId === teamId && !enabled.has(id)) await this.retire(id);
    }
    const instances: AppInstance[] = [];
    for (const row of rows) {
      const instance = await this.instanceFor(row);
      if (instance) instances.push(instance);
    }
    return instances;
  }

  private async instanceFor(row: ConfigRow): Promise<AppInstance | undefined> {
    if (!row.code) return undefined; // a site app only: nothing runs on the server
    const existing = this.running.get(row.id);
    if (existing?.app.version === row.version) return existing;
    if (existing) await this.retire(row.id);
    if (this.failedVersions.get(row.id) === row.version) return undefined;
    try {
      const definition = await this.definitionOf(row);
      const instance = await AppInstance.start(definition, this.services);
      this.running.set(row.id, instance);
      this.failedVersions.delete(row.id);
      return instance;
    } catch (error) {
      const lasting = lastingFailure(error);
      if (lasting) this.failedVersions.set(row.id, row.version);
      this.logger.warn(
        { pluginConfigId: row.id, err: messageOf(error), retried: !lasting },
        lasting ? 'pipeline app does not start' : 'pipeline app does not start now; it is tried again',
      );
      return undefined;
    }
  }

  private async retire(pluginConfigId: number): Promise<void> {
    const instance = this.running.get(pluginConfigId);
    this.running.delete(pluginConfigId);
    await instance?.stop();
  }

  private async definitionOf(row: ConfigRow): Promise<AppDefinition> {
    const config: Record<string, SandboxJson> = {};
    for (const [key, value] of Object.entries(row.config)) {
      config[key] = await this.openValue(value);
    }
    const { rows: attachments } = await this.pool.query<{
      key: string;
      content_type: string;
      file_name: string;
      contents: Buffer;
    }>('SELECT key, content_type, file_name, contents FROM plugin_attachments WHERE plugin_config_id = $1', [
      row.id,
    ]);
    return {
      pluginConfigId: row.id,
      pluginId: row.plugin_id,
      teamId: row.team_id,
      pluginName: row.name,
      code: row.code ?? '',
      config,
      attachments: Object.fromEntries(
        attachments.map((attachment) => [
          attachment.key,
          {
            content_type: attachment.content_type,
            file_name: attachment.file_name,
            contents: attachment.contents.toString('utf8'),
          },
        ]),
      ),
      metrics: row.metrics ?? {},
      version: row.version,
    };
  }

  /** Opened only in the process that runs the app. */
  private async openValue(value: unknown): Promise<SandboxJson> {
    if (isSealed(value)) {
      if (!this.secrets) {
        throw new ConfigValueError('the config has secret values but no ENCRYPTION_KEYS to open them');
      }
      const opened = await this.secrets.open(value.sealed).catch((error: unknown) => {
        throw new ConfigValueError(`a secret value of the config cannot be opened: ${messageOf(error)}`);
      });
      try {
        return JSON.parse(opened) as SandboxJson;
      } catch {
        return opened;
      }
    }
    return value as SandboxJson;
  }
}

function isSealed(value: unknown): value is { sealed: string } {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { sealed?: unknown }).sealed === 'string'
  );
}
