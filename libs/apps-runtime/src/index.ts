export { AppInstance, type AppCapturedEvent, type AppDefinition, type AppServices } from './app-instance';
export { AppDestinations, type AppDestinationsOptions, type DestinationEvent } from './app-destinations';
export { createAppsRuntime, type AppsRuntime } from './apps-runtime';
export { boundedFetch, type BoundedFetchOptions } from './bounded-fetch';
export { EnabledApps, type SecretOpener } from './enabled-apps';
export { PluginCache } from './plugin-cache';
export { PluginLogWriter, type PluginLogLine } from './plugin-log';
export { PluginStorage } from './plugin-storage';
