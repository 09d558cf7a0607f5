import type { DestinationFactory } from './destination.types';
import { createHttpDestination } from './destinations/http.destination';
import { createNoOpDestination } from './destinations/noop.destination';
import { createPostgresDestination } from './destinations/postgres.destination';
import { createS3Destination } from './destinations/s3.destination';

/** The destinations this server exports to, by the `destination.type` of an export. */
export const BATCH_EXPORT_DESTINATIONS: Readonly<Record<string, DestinationFactory>> = {
  S3: createS3Destination,
  Postgres: createPostgresDestination,
  HTTP: (config, run) => createHttpDestination(config, run),
  NoOp: createNoOpDestination,
};
