export { detectArchiveFormat, type ArchiveFormat } from './app-archive.reader';
export { buildApp, RUNTIME_MODULES, wrapFrontendApp, wrapSiteApp } from './app-build.util';
export { downloadApp } from './app-download.util';
export { inspectApp, type InspectAppOptions } from './app-inspect.util';
export { AppInstallError } from './app-install.error';
export type {
  AppCapabilities,
  AppConfigField,
  AppConfigFieldType,
  AppFiles,
  AppMetricKind,
  AppPublicJob,
  AppSourceOptions,
  BuiltApp,
  BuiltFile,
  DownloadedApp,
  InspectedApp,
  PluginJson,
  PreparedApp,
} from './app-install.types';
export { prepareApp, type PrepareAppOptions } from './app-prepare.util';
export {
  DEFAULT_NPM_REGISTRY_URL,
  parseAppUrl,
  stripUrlSecrets,
  UNSUPPORTED_URL_MESSAGE,
  type AppSource,
} from './app-url.parser';
export { latestVersion } from './app-version.util';
export {
  MISSING_PLUGIN_JSON_MESSAGE,
  readPluginJson,
  STATELESS_WITH_CONFIG_MESSAGE,
  type ReadPluginJsonOptions,
} from './plugin-json.reader';
