import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import {
  AppInstallError,
  downloadApp,
  latestVersion,
  prepareApp,
  type AppFiles,
  type AppSourceOptions,
  type BuiltFile,
} from '@hogbase/apps-install';
import { SandboxBudgetError, SandboxPool } from '@hogbase/apps-sandbox';
import type { ManagementConfig } from '@hogbase/config';
import { EgressPolicy } from '@hogbase/egress';
import type { Plugin, PluginSourceFileStatus } from '@hogbase/postgres';
import { ApiError, validationError } from '../common/api.error';
import { MANAGEMENT_CONFIG } from '../management-config.constants';

export interface SourceFileState {
  filename: string;
  source: string;
  transpiled: string | null;
  status: PluginSourceFileStatus;
  error: string | null;
}

export interface PreparedApp {
  name: string;
  description: string | null;
  icon: string | null;
  configSchema: unknown[];
  publicJobs: Record<string, unknown>;
  isStateless: boolean;
  /** plugin.json, the entry, site.ts and frontend.tsx; other files only matter to the build. */
  files: SourceFileState[];
  /** Null when the entry did not build or load (its file's `error` says why); `{}` without an entry. */
  capabilities: Record<string, unknown> | null;
  entryLoaded: boolean;
  metrics: Record<string, unknown> | null;
  firstError: string | null;
}

export interface DownloadedApp extends PreparedApp {
  urlWithoutSecrets: string;
  tag: string | null;
}

export function downloadedAppFields(app: DownloadedApp) {
  return {
    name: app.name,
    description: app.description ?? '',
    icon: app.icon,
    configSchema: app.configSchema,
    publicJobs: app.publicJobs,
    isStateless: app.isStateless,
    tag: app.tag,
    capabilities: app.capabilities ?? {},
    metrics: app.metrics ?? {},
    // A download is the whole app: what its files say replaces what a body declared.
    declaredCapabilities: null,
    declaredMetrics: null,
  } satisfies Partial<Plugin>;
}

function text(value: string | Uint8Array | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : Buffer.from(value).toString('utf8');
}

/** Four inspections at once, each holding its 64 MiB heap limit of the budget. */
const INSPECTION_THREADS = 1;
const INSPECTION_MEMORY_BUDGET_BYTES = 4 * 64 * 1024 * 1024;

/** An install failure is the user's to fix (400); no room to inspect now is a 503. */
function userError(error: unknown): never {
  if (error instanceof AppInstallError) throw validationError(error.message);
  if (error instanceof SandboxBudgetError) {
    throw new ApiError('service_unavailable', 'Too many apps are being installed at once: try again.');
  }
  throw error;
}

function fileState(filename: string, source: string, built: BuiltFile): SourceFileState {
  return built.status === 'TRANSPILED'
    ? { filename, source, transpiled: built.code, status: 'TRANSPILED', error: null }
    : { filename, source, transpiled: null, status: 'ERROR', error: built.error };
}

/** The management API's one door to `@hogbase/apps-install`. */
@Injectable()
export class PluginInstaller implements OnApplicationShutdown {
  /** Shared by every download: one policy, so one connection pool. */
  private egress: EgressPolicy | undefined;
  /** SECURITY: inspecting runs the app's top level, so on a worker thread, never the request thread. */
  private sandboxes: SandboxPool | undefined;

  constructor(@Inject(MANAGEMENT_CONFIG) private readonly config: ManagementConfig) {}

  async onApplicationShutdown(): Promise<void> {
    const sandboxes = this.sandboxes;
    this.sandboxes = undefined;
    await sandboxes?.close();
  }

  private get inspectionSandboxes(): SandboxPool {
    this.sandboxes ??= new SandboxPool({
      threads: INSPECTION_THREADS,
      memoryBudgetBytes: INSPECTION_MEMORY_BUDGET_BYTES,
      budgetName: "the app inspections' memory budget",
    });
    return this.sandboxes;
  }

  private get options(): AppSourceOptions {
    this.egress ??= new EgressPolicy(this.config.egress);
    return {
      localAppsDirectory: this.config.apps.localDirectory ?? null,
      npmRegistryUrl: this.config.apps.npmRegistryUrl,
      egress: this.egress,
    };
  }

  /** Downloads and prepares an app; any failure (download, plugin.json, build, load) is a 400. */
  async download(url: string): Promise<DownloadedApp> {
    const downloaded = await downloadApp(url, this.options).catch(userError);
    const prepared = await this.prepare(downloaded.files, { defaultName: downloaded.defaultName });
    if (prepared.firstError) throw validationError(prepared.firstError);
    return { ...prepared, urlWithoutSecrets: downloaded.urlWithoutSecrets, tag: downloaded.tag };
  }

  /**
   * Build and load errors stay in the files (a source app being edited shows them); a bad
   * plugin.json is a 400.
   */
  async prepare(files: AppFiles, { defaultName }: { defaultName: string | null }): Promise<PreparedApp> {
    const readable =
      files['plugin.json'] === undefined && defaultName !== null
        ? { ...files, 'plugin.json': JSON.stringify({ name: defaultName }) }
        : files;
    const { pluginJson, built, capabilities, metrics } = await prepareApp(readable, {
      defaultName,
      sandboxes: this.inspectionSandboxes,
    }).catch(userError);
    const stored: SourceFileState[] = [];
    const pluginJsonText = text(files['plugin.json']);
    if (pluginJsonText !== undefined) {
      stored.push({
        filename: 'plugin.json',
        source: pluginJsonText,
        transpiled: null,
        status: null,
        error: null,
      });
    }
    const entries: [string | null, BuiltFile | undefined][] = [
      [pluginJson.main, built.index],
      ['site.ts', built.site],
      ['frontend.tsx', built.frontend],
    ];
    let firstError: string | null = null;
    for (const [filename, result] of entries) {
      const source = filename === null ? undefined : text(files[filename]);
      if (filename === null || source === undefined || !result) continue;
      stored.push(fileState(filename, source, result));
      if (result.status === 'ERROR') firstError ??= result.error;
    }
    const entryFailed = built.index?.status === 'ERROR';
    return {
      name: pluginJson.name,
      description: pluginJson.description,
      icon: pluginJson.icon,
      configSchema: pluginJson.configSchema,
      publicJobs: pluginJson.publicJobs,
      isStateless: pluginJson.isStateless,
      files: stored,
      capabilities: entryFailed ? null : (capabilities as Record<string, unknown>),
      entryLoaded: built.index?.status === 'TRANSPILED',
      metrics: entryFailed ? null : metrics,
      firstError,
    };
  }

  async latestVersion(url: string): Promise<string | null> {
    return latestVersion(url, this.options).catch(userError);
  }
}
