// A runtime per service that runs apps, over the process's shared sandbox pool and cache.
export { createAppsRuntime, type AppsRuntime } from './apps-runtime';
export type { AppCapturedEvent, AppInstance } from './app-instance';

// The two ways apps run behind ingestion.
export { AppTransformations } from './app-transformations';
export { AppDestinations, type DestinationEvent } from './app-destinations';
