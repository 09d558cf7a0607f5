import { buildApp } from './app-build.util';
import { AppInstallError } from './app-install.error';
import type { AppFiles, PreparedApp } from './app-install.types';
import { inspectApp, type InspectAppOptions } from './app-inspect.util';
import { readPluginJson, type ReadPluginJsonOptions } from './plugin-json.validator';

export type PrepareAppOptions = ReadPluginJsonOptions & InspectAppOptions;

/**
 * A bad plugin.json throws {@link AppInstallError}; a file that does not compile (or an entry whose
 * top level throws) comes back as that file's ERROR, so the sources can be stored, as PostHog does.
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
