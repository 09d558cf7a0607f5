import type { EgressPolicy } from '@hogbase/egress';

/** An app's files by path relative to its root (`plugin.json`, `index.ts`, `lib/util.ts`): text as strings, other files (images) as bytes. */
export type AppFiles = Record<string, string | Uint8Array>;

/** Where and how apps are downloaded; every field has a default except `localAppsDirectory`. */
export interface AppSourceOptions {
  /** The only folder `file:` apps may come from. Unset: `file:` URLs are refused. */
  localAppsDirectory?: string | null;
  /** Default `https://registry.npmjs.org`. */
  npmRegistryUrl?: string;
  /** Default `https://api.github.com` (latest commit of a repository). */
  githubApiUrl?: string;
  /** Default `https://codeload.github.com` (repository zip archives). */
  githubCodeloadUrl?: string;
  /** Default `https://gitlab.com` (archives and the commits API). */
  gitlabUrl?: string;
  /** Compressed archive bound. Default 20 MiB. */
  maxArchiveBytes?: number;
  /** Bound on the unpacked content (the tar stream, the zip's files, a local folder). Default 50 MiB. */
  maxUnpackedBytes?: number;
  /** Bound on each HTTP exchange, body included. Default 30 s. */
  timeoutMs?: number;
  /**
   * Where downloads may connect, each redirect included. Default: public addresses only (no
   * loopback, private or link-local target).
   */
  egress?: EgressPolicy;
}

export interface DownloadedApp {
  files: AppFiles;
  /** The URL without its query string (PostHog strips `?private_token=`). */
  urlWithoutSecrets: string;
  /** The version: npm version, repository ref or commit, else package.json's version, else null. */
  tag: string | null;
  /** For `file:` apps, the folder's name: PostHog's default when plugin.json has no `name`. */
  defaultName: string | null;
}

export type AppConfigFieldType = 'string' | 'attachment' | 'choice' | 'json';

/** One entry of `config_schema`, as PostHog stores it (markdown-only entries have no key). */
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
  /** PostHog's `config_schema`: always an array. */
  configSchema: AppConfigField[];
  /** PostHog's `public_jobs`. */
  publicJobs: Record<string, AppPublicJob>;
  isStateless: boolean;
  /** The entry file; null for an app that is only a site app or frontend. */
  main: string | null;
  /** The plugin.json object as written, for storing it (PostHog keeps it minified). */
  raw: Record<string, unknown>;
}

export type BuiltFile = { status: 'TRANSPILED'; code: string } | { status: 'ERROR'; error: string };

export interface BuiltApp {
  index?: BuiltFile;
  site?: BuiltFile;
  frontend?: BuiltFile;
}

/** PostHog's `capabilities`; `{}` for an app without an entry file (site apps). */
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
