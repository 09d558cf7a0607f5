import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PLUGIN_TYPES } from '@hogbase/postgres';
import type { Plugin, PluginAttachment, PluginConfig, PluginLogEntry } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { ANY_JSON, ApiModel, DATE_TIME, FREE_FORM_OBJECT } from '../schema/api-responses.decorator';
import { SECRET_MASK } from './plugin-config-values.util';

const PLUGIN_LOG_SOURCES = ['SYSTEM', 'PLUGIN', 'CONSOLE'];
/** The levels of an app's log lines (`type`), which the logs' `type_filter` takes. */
export const PLUGIN_LOG_TYPES = ['DEBUG', 'LOG', 'INFO', 'WARN', 'ERROR'];

/** How long a `latest_tag` equal to `tag` is still shown after a check (PostHog's 30 minutes). */
const LATEST_TAG_FRESH_MS = 30 * 60 * 1000;

/** The spec's Pipeline app: every collection's apps, and `plugin_info` of a config. */
@ApiModel('PipelineApp')
export class PipelineAppResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: String, enum: PLUGIN_TYPES, nullable: true })
  plugin_type!: string | null;

  @ApiProperty()
  name!: string;

  @ApiProperty()
  description!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Where it was installed from' })
  url!: string | null;

  @ApiProperty({ type: String, nullable: true })
  icon!: string | null;

  @ApiProperty({ ...ANY_JSON, description: "plugin.json's `config`: the fields a config of it fills" })
  config_schema!: unknown;

  @ApiProperty({ type: String, nullable: true, description: 'The installed version' })
  tag!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The newest version, once checked' })
  latest_tag!: string | null;

  @ApiProperty()
  is_global!: boolean;

  @ApiProperty({ type: String, format: 'uuid', nullable: true })
  organization_id!: string | null;

  @ApiProperty({ description: 'posthog-inline for apps of no organization' })
  organization_name!: string;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    description: '{methods, jobs, scheduled_tasks}: declared until the code is inspected, then the code’s',
  })
  capabilities!: Record<string, unknown>;

  @ApiProperty({ ...FREE_FORM_OBJECT, description: 'Metric name → sum, max or min' })
  metrics!: Record<string, unknown>;

  @ApiProperty({ ...FREE_FORM_OBJECT, description: 'Job name → its payload’s fields' })
  public_jobs!: Record<string, unknown>;
}

/** An app's enabled configuration in one project. */
@ApiModel('PluginConfig')
export class PluginConfigResponse {
  @ApiProperty({ type: 'integer' })
  id!: number;

  @ApiProperty({ type: 'integer', description: 'The id of its app' })
  plugin!: number;

  @ApiProperty()
  enabled!: boolean;

  @ApiProperty({ type: 'integer' })
  order!: number;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    description:
      'The values of its fields: secret ones masked, attachments as {uid, saved, size, name, type}',
  })
  config!: Record<string, unknown>;

  @ApiProperty({ type: String, nullable: true, description: "Always null: errors are in the app's logs" })
  error!: null;

  @ApiProperty({ type: 'integer' })
  team_id!: number;

  @ApiPropertyOptional({ type: () => PipelineAppResponse, description: 'Its app (in lists and exports)' })
  plugin_info?: PipelineAppResponse;

  @ApiProperty({ type: Number, nullable: true, description: 'Share of events delivered in the last 24 h' })
  delivery_rate_24h!: number | null;

  @ApiProperty(DATE_TIME)
  created_at!: string;

  @ApiProperty(DATE_TIME)
  updated_at!: string;

  @ApiProperty({ type: String, nullable: true, description: 'Always null here' })
  name!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Always null here' })
  description!: string | null;

  @ApiProperty()
  deleted!: boolean;

  @ApiProperty({
    ...DATE_TIME,
    nullable: true,
    description:
      "When the config took its copy of another organization's app (it runs that copy until `upgrade/`); " +
      'null when it follows the app’s latest code. Not in PostHog',
  })
  code_pinned_at!: string | null;

  @ApiProperty({
    description: "The app's code, site code or schema differs from the copy this config runs. Not in PostHog",
  })
  code_update_available!: boolean;
}

@ApiModel('PluginLogEntry')
export class PluginLogEntryResponse {
  @ApiProperty()
  id!: string;

  @ApiProperty({ type: 'integer' })
  team_id!: number;

  @ApiProperty({ type: 'integer' })
  plugin_id!: number;

  @ApiProperty({ type: 'integer' })
  plugin_config_id!: number;

  @ApiProperty(DATE_TIME)
  timestamp!: string;

  @ApiProperty({ enum: PLUGIN_LOG_SOURCES })
  source!: string;

  @ApiProperty({ enum: PLUGIN_LOG_TYPES })
  type!: string;

  @ApiProperty()
  message!: string;

  @ApiProperty()
  instance_id!: string;
}

/** What `check_for_updates/` answers: the app, with `latest_tag` just checked. */
@ApiModel('PipelineAppUpdateCheck')
export class PluginUpdateCheckResponse {
  @ApiProperty({ type: () => PipelineAppResponse })
  plugin!: PipelineAppResponse;
}

/** An app's files: name → source (null for a file being deleted, in update_source's answer). */
export const SOURCE_FILES_SCHEMA = {
  type: 'object',
  additionalProperties: { type: 'string', nullable: true },
  description: 'File name → its source',
} as const;

/** PostHog shows `latest_tag` once checked, when it differs from `tag` or the check is recent. */
function latestTag(plugin: Plugin, now: Date): string | null {
  if (!plugin.latestTag || !plugin.latestTagCheckedAt) return null;
  if (plugin.latestTag !== plugin.tag) return plugin.latestTag;
  return now.getTime() - plugin.latestTagCheckedAt.getTime() <= LATEST_TAG_FRESH_MS ? plugin.latestTag : null;
}

export function presentPlugin(
  plugin: Plugin,
  organizationName: string | null,
  now = new Date(),
): PipelineAppResponse {
  return {
    id: plugin.id,
    plugin_type: plugin.pluginType,
    name: plugin.name,
    description: plugin.description,
    url: plugin.url,
    icon: plugin.icon,
    config_schema: plugin.configSchema,
    tag: plugin.tag,
    latest_tag: latestTag(plugin, now),
    is_global: plugin.isGlobal,
    organization_id: plugin.organizationId,
    // PostHog's name for apps without an organization (inline apps).
    organization_name: organizationName ?? 'posthog-inline',
    // What the body declared until the code is inspected; the runtime only ever reads the code's.
    capabilities: plugin.declaredCapabilities ?? plugin.capabilities,
    metrics: plugin.declaredMetrics ?? plugin.metrics,
    public_jobs: plugin.publicJobs,
  };
}

/** `config` is the config as shown: secret values already masked. */
export function presentPluginConfig(
  pluginConfig: PluginConfig,
  config: Record<string, unknown>,
  deliveryRate: number | null,
  codeUpdateAvailable: boolean,
  pluginInfo?: PipelineAppResponse,
): PluginConfigResponse {
  return {
    id: pluginConfig.id,
    plugin: pluginConfig.pluginId,
    enabled: pluginConfig.enabled,
    order: pluginConfig.order,
    config,
    // PostHog keeps errors in the app's logs; the field stays for clients that read it.
    error: null,
    team_id: pluginConfig.teamId,
    ...(pluginInfo ? { plugin_info: pluginInfo } : {}),
    delivery_rate_24h: deliveryRate,
    created_at: iso(pluginConfig.createdAt),
    updated_at: iso(pluginConfig.updatedAt),
    name: null,
    description: null,
    deleted: pluginConfig.deleted,
    code_pinned_at: pluginConfig.codePinnedAt ? iso(pluginConfig.codePinnedAt) : null,
    code_update_available: codeUpdateAvailable,
  };
}

/** How PostHog shows a stored attachment in `config`; a secret one names nothing of the file. */
export interface AttachmentResponse {
  uid: number;
  saved: true;
  size: number;
  name: string;
  type: string;
}

export function presentAttachment(
  attachment: Pick<PluginAttachment, 'id' | 'fileSize' | 'fileName' | 'contentType'>,
  secret: boolean,
): AttachmentResponse {
  return secret
    ? { uid: -1, saved: true, size: -1, name: SECRET_MASK, type: 'application/octet-stream' }
    : {
        uid: attachment.id,
        saved: true,
        size: attachment.fileSize,
        name: attachment.fileName,
        type: attachment.contentType,
      };
}

export function presentLogEntry(entry: PluginLogEntry): PluginLogEntryResponse {
  return {
    id: entry.id,
    team_id: entry.teamId,
    plugin_id: entry.pluginId,
    plugin_config_id: entry.pluginConfigId,
    timestamp: iso(entry.timestamp),
    source: entry.source,
    type: entry.type,
    message: entry.message,
    instance_id: entry.instanceId,
  };
}
