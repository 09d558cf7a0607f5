import { buildApp } from './app-build.util';
import { AppInstallError } from './app-install.error';
import type { AppFiles, PreparedApp } from './app-install.types';
import { inspectApp, type InspectAppOptions } from './app-inspect.util';
import { readPluginJson, type ReadPluginJsonOptions } from './plugin-json.reader';

export type PrepareAppOptions = ReadPluginJsonOptions & InspectAppOptions;

/**
 * plugin.json, build and inspection in one step, for installs, upgrades and source edits.
 * A bad plugin.json throws {@link AppInstallError}; a file that does not compile, or an entry whose
 * top level throws, comes back as that file's ERROR (with `capabilities` `{}`) so the caller can
 * store the sources and show the error, as PostHog does for edited apps. The entry's top level runs
 * on `options.sandboxes` (see {@link inspectApp}).
 */
export async function prepareApp(files: AppFiles, options: PrepareAppOptions): Promise<PreparedApp> {
  const pluginJson = readPluginJson(files, options);
  const built = await buildApp(files, pluginJson);
  if (built.index?.status !== 'TRANSPILED') return { pluginJson, built, capabilities: {}, metrics: {} };
  try {
    const { capabilities, metrics } = await inspectApp(built.index.code, options);
    return { pluginJson, built, capabilities, metrics };
  } catch (error) {
    if (!(error instanceof AppInstallError)) throw error;
    return {
      pluginJson,
      built: { ...built, index: { status: 'ERROR', error: error.message } },
      capabilities: {},
      metrics: {},
    };
  }
}
