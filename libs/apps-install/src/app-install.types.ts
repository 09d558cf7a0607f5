import type { EgressPolicy } from '@hogbase/egress';

/** By path relative to the app's root; text as strings, other files (images) as bytes. */
export type AppFiles = Record<string, string | Uint8Array>;

/** Defaults in README.md. */
export interface AppSourceOptions {
  /** Unset: `file:` URLs are refused. */
  localAppsDirectory?: string | null;
  npmRegistryUrl?: string;
  githubApiUrl?: string;
  githubCodeloadUrl?: string;
  gitlabUrl?: string;
  maxArchiveBytes?: number;
  /** The tar stream, the zip's files, a local folder. */
  maxUnpackedBytes?: number;
  /** Each HTTP exchange, body included. */
  timeoutMs?: number;
  /** Each redirect included. */
  egress?: EgressPolicy;
}

export interface DownloadedApp {
  files: AppFiles;
  /** PostHog strips `?private_token=`. */
  urlWithoutSecrets: string;
  /** npm version, repository ref or commit, else package.json's version. */
  tag: string | null;
  /** A `file:` app's folder name: PostHog's default when plugin.json has no `name`. */
  defaultName: string | null;
}

export type AppConfigFieldType = 'string' | 'attachment' | 'choice' | 'json';

/** Markdown-only entries have no key. */
export interface AppConfigField {
  key?: string;
  name?: string;
  type?: AppConfigFieldType;
  default?: unknown;
  required?: boolean;
  secret?: boolean;
  hint?: string;
  choices?: string[];
  site?: boolean;
  markdown?: string;
  required_if?: unknown;
  visible_if?: unknown;
  order?: number;
  [other: string]: unknown;
}

export interface AppPublicJob {
  payload?: Record<string, unknown>;
  [other: string]: unknown;
}

export interface PluginJson {
  name: string;
  description: string | null;
  url: string | null;
  icon: string | null;
  /** Always an array. */
  configSchema: AppConfigField[];
  publicJobs: Record<string, AppPublicJob>;
  isStateless: boolean;
  /** Null for an app that is only a site app or frontend. */
  main: string | null;
  /** As written, for storing it. */
  raw: Record<string, unknown>;
}

export type BuiltFile = { status: 'TRANSPILED'; code: string } | { status: 'ERROR'; error: string };

export interface BuiltApp {
  index?: BuiltFile;
  site?: BuiltFile;
  frontend?: BuiltFile;
}

/** `{}` for an app without an entry file (site apps). */
export interface AppCapabilities {
  methods?: string[];
  jobs?: string[];
  scheduled_tasks?: string[];
}

export type AppMetricKind = 'sum' | 'max' | 'min';

export interface InspectedApp {
  capabilities: Required<AppCapabilities>;
  metrics: Record<string, AppMetricKind>;
}

export interface PreparedApp {
  pluginJson: PluginJson;
  built: BuiltApp;
  capabilities: AppCapabilities;
  metrics: Record<string, AppMetricKind>;
}
