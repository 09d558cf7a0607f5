// A runtime per service that runs apps, over the process's shared sandbox pool and cache.
export { createAppsRuntime, type AppsRuntime } from './apps-runtime.service';
export type { AppCapturedEvent, AppInstance } from './app-instance.service';

// The two ways apps run behind ingestion.
export { AppTransformations } from './app-transformations.service';
export { AppDestinations, type DestinationEvent } from './app-destinations.service';
