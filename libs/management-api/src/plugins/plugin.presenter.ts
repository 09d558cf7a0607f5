import type { Plugin, PluginAttachment, PluginConfig, PluginLogEntry } from '@hogbase/postgres';
import { iso } from '../common/iso.util';
import { SECRET_MASK } from './plugin-config-values';

/** How long a `latest_tag` equal to `tag` is still shown after a check (PostHog's 30 minutes). */
const LATEST_TAG_FRESH_MS = 30 * 60 * 1000;

export interface PipelineAppResponse {
  id: number;
  plugin_type: string | null;
  name: string;
  description: string;
  url: string | null;
  icon: string | null;
  config_schema: unknown;
  tag: string | null;
  latest_tag: string | null;
  is_global: boolean;
  organization_id: string | null;
  organization_name: string;
  capabilities: Record<string, unknown>;
  metrics: Record<string, unknown>;
  public_jobs: Record<string, unknown>;
}

export interface PluginConfigResponse {
  id: number;
  plugin: number;
  enabled: boolean;
  order: number;
  config: Record<string, unknown>;
  error: null;
  team_id: number;
  plugin_info?: PipelineAppResponse;
  delivery_rate_24h: number | null;
  created_at: string;
  updated_at: string;
  name: string | null;
  description: string | null;
  deleted: boolean;
  /**
   * When the config took its copy of another organization's app (it runs that copy until `upgrade/`);
   * null when it follows the app's latest code. Not in PostHog.
   */
  code_pinned_at: string | null;
  /** The app's code, site code or schema differs from the copy this config runs. Not in PostHog. */
  code_update_available: boolean;
}

export interface PluginLogEntryResponse {
  id: string;
  team_id: number;
  plugin_id: number;
  plugin_config_id: number;
  timestamp: string;
  source: string;
  type: string;
  message: string;
  instance_id: string;
}

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
