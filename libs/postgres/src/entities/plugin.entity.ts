import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** PostHog's plugin types: how the app's code came to be installed. */
export const PLUGIN_TYPES = ['local', 'custom', 'repository', 'source', 'inline'] as const;
export type PluginType = (typeof PLUGIN_TYPES)[number];

/** A source file's state: null for files used as they are (plugin.json, …). */
export type PluginSourceFileStatus = 'TRANSPILED' | 'ERROR' | null;

export type PluginLogSource = 'SYSTEM' | 'PLUGIN' | 'CONSOLE';
export type PluginLogType = 'DEBUG' | 'LOG' | 'INFO' | 'WARN' | 'ERROR';

/** A pipeline app, installed for one organization (or global, for every organization). */
@Entity('plugins')
export class Plugin {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('uuid', { name: 'organization_id', nullable: true })
  organizationId!: string | null;

  @Column('varchar', { name: 'plugin_type', length: 32, nullable: true })
  pluginType!: PluginType | null;

  @Column('text')
  name!: string;

  @Column('text', { default: '' })
  description!: string;

  /** The install address without its query string. */
  @Column('text', { nullable: true })
  url!: string | null;

  /** The address as given, private token included: what upgrades download from. Never returned. */
  @Column('text', { name: 'url_with_secrets', nullable: true })
  urlWithSecrets!: string | null;

  @Column('text', { nullable: true })
  icon!: string | null;

  @Column('jsonb', { name: 'config_schema', default: () => "'[]'" })
  configSchema!: unknown;

  @Column('text', { nullable: true })
  tag!: string | null;

  @Column('text', { name: 'latest_tag', nullable: true })
  latestTag!: string | null;

  @Column('timestamptz', { name: 'latest_tag_checked_at', nullable: true })
  latestTagCheckedAt!: Date | null;

  @Column('boolean', { name: 'is_global', default: false })
  isGlobal!: boolean;

  @Column('boolean', { name: 'is_stateless', default: false })
  isStateless!: boolean;

  /** SECURITY: what inspecting the code found, all the runtime reads; never from an API body. */
  @Column('jsonb', { default: () => "'{}'" })
  capabilities!: Record<string, unknown>;

  /** The `metrics` export the inspection found: the `meta.metrics` the runtime gives the app. */
  @Column('jsonb', { default: () => "'{}'" })
  metrics!: Record<string, unknown>;

  /** Shown until the code is inspected again; nothing runs by them. */
  @Column('jsonb', { name: 'declared_capabilities', nullable: true })
  declaredCapabilities!: Record<string, unknown> | null;

  @Column('jsonb', { name: 'declared_metrics', nullable: true })
  declaredMetrics!: Record<string, unknown> | null;

  /** The pipeline collection the app was created through (`pipeline_destinations`, …): it stays there. */
  @Column('varchar', { name: 'created_through', length: 32, nullable: true })
  createdThrough!: string | null;

  @Column('jsonb', { name: 'public_jobs', default: () => "'{}'" })
  publicJobs!: Record<string, unknown>;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

@Entity('plugin_source_files')
export class PluginSourceFile {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('int', { name: 'plugin_id' })
  pluginId!: number;

  @Column('text')
  filename!: string;

  @Column('text', { nullable: true })
  source!: string | null;

  @Column('text', { nullable: true })
  transpiled!: string | null;

  @Column('varchar', { length: 20, nullable: true })
  status!: PluginSourceFileStatus;

  @Column('text', { nullable: true })
  error!: string | null;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;
}

@Entity('plugin_configs')
export class PluginConfig {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('int', { name: 'plugin_id' })
  pluginId!: number;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('boolean', { default: false })
  enabled!: boolean;

  @Column('int', { default: 0 })
  order!: number;

  /**
   * SECURITY: a `secret: true` field's value is stored as `{ sealed: "…" }` (SecretBox), never in clear;
   * the rest stays readable by capture for site apps.
   */
  @Column('jsonb', { default: () => "'{}'" })
  config!: Record<string, unknown>;

  @Column('jsonb', { nullable: true })
  error!: unknown;

  @Column('varchar', { name: 'web_token', length: 64 })
  webToken!: string;

  @Column('boolean', { default: false })
  deleted!: boolean;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz', { name: 'updated_at', default: () => 'now()' })
  updatedAt!: Date;

  /**
   * SECURITY: set on a config of another organization's (global) app: it runs the copy below, taken
   * when its own admin created or upgraded it, never what the app's organization writes since.
   */
  @Column('timestamptz', { name: 'code_pinned_at', nullable: true })
  codePinnedAt!: Date | null;

  /** The server entry's transpiled code at the pin (null: none built). Read by the apps runtime. */
  @Column('text', { name: 'pinned_code', nullable: true, select: false })
  pinnedCode?: string | null;

  /** `site.ts` transpiled at the pin (null: none). Read by capture for site apps. */
  @Column('text', { name: 'pinned_site_code', nullable: true, select: false })
  pinnedSiteCode?: string | null;

  /** The app's config schema at the pin: what the config is checked, masked and served with. */
  @Column('jsonb', { name: 'pinned_config_schema', nullable: true })
  pinnedConfigSchema!: unknown;

  /** The app's capabilities at the pin: whether ingestion calls the pinned code (the apps runtime). */
  @Column('jsonb', { name: 'pinned_capabilities', nullable: true, select: false })
  pinnedCapabilities?: unknown;
}

/** A file given to a config's attachment field (`meta.attachments[key]`). */
@Entity('plugin_attachments')
export class PluginAttachment {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column('int', { name: 'plugin_config_id' })
  pluginConfigId!: number;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('text')
  key!: string;

  @Column('text', { name: 'content_type' })
  contentType!: string;

  @Column('text', { name: 'file_name' })
  fileName!: string;

  @Column('int', { name: 'file_size' })
  fileSize!: number;

  @Column('bytea')
  contents!: Buffer;
}

@Entity('plugin_log_entries')
export class PluginLogEntry {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('int', { name: 'plugin_config_id' })
  pluginConfigId!: number;

  @Column('int', { name: 'plugin_id' })
  pluginId!: number;

  @Column('int', { name: 'team_id' })
  teamId!: number;

  @Column('timestamptz', { default: () => 'clock_timestamp()' })
  timestamp!: Date;

  @Column('varchar', { length: 20 })
  source!: PluginLogSource;

  @Column('varchar', { length: 20 })
  type!: PluginLogType;

  @Column('text')
  message!: string;

  @Column('text', { name: 'instance_id', default: '' })
  instanceId!: string;
}
