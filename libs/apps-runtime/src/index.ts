export {
  AppInstance,
  AppSkippedError,
  type AppCapturedEvent,
  type AppDefinition,
  type AppServices,
  type AppTimeoutPolicy,
} from './app-instance';
export { AppDestinations, type AppDestinationsOptions, type DestinationEvent } from './app-destinations';
export { AppTransformations } from './app-transformations';
export { createAppsRuntime, type AppsRuntime } from './apps-runtime';
export { openGeoIp, type GeoIp } from './geoip';
export { boundedFetch, type BoundedFetchOptions } from './bounded-fetch';
export { EnabledApps, type SecretOpener } from './enabled-apps';
export { PluginCache, type PluginCacheLimits } from './plugin-cache';
export { PluginLogWriter, type PluginLogLine } from './plugin-log';
export { PluginStorage, type PluginStorageLimits } from './plugin-storage';
