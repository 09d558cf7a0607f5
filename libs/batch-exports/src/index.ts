// What the workers' runner and the management API need of the destinations.
export { NonRetryableExportError } from './batch-export.errors';
export type { DestinationFactory, DestinationWriter, ExportRunInfo } from './destination.types';
export { createBatchExportDestinations, MAX_DESTINATION_ERROR_CHARS } from './destination-registry.util';
export { ALL_DESTINATION_SECRET_KEYS, DESTINATION_SECRET_KEYS } from './destination-secrets.constants';
export { createNoOpDestination } from './destinations/noop.destination';

// The data intervals, aligned in the project's time zone.
export {
  intervalDuration,
  intervalsOverlapping,
  intervalStart,
  nextIntervalStart,
  type BatchExportInterval,
} from './intervals.util';
