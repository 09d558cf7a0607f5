import { createEgressFetch, type EgressPolicy } from '@hogbase/egress';
import type { DestinationFactory, DestinationWriter, ExportChunk, WriteResult } from './destination.types';
import { createHttpDestination, DEFAULT_HTTP_DESTINATION_OPTIONS } from './destinations/http.destination';
import { createNoOpDestination } from './destinations/noop.destination';
import { createPostgresDestination } from './destinations/postgres.destination';
import { createS3Destination } from './destinations/s3.destination';

/** Errors quote what the other side said, which may be of any length: a run keeps this much. */
export const MAX_DESTINATION_ERROR_CHARS = 1_000;

export interface BatchExportDestinationsOptions {
  egress: EgressPolicy;
  /** BATCH_EXPORT_S3_SERVER_CREDENTIALS. */
  s3ServerCredentials?: boolean;
}

/** By `destination.type`; every connection checked against the egress policy. */
export function createBatchExportDestinations(
  options: BatchExportDestinationsOptions,
): Readonly<Record<string, DestinationFactory>> {
  // One fetch, so that the HTTP exports share one connection pool.
  const fetch = createEgressFetch(options.egress);
  const destinations: Record<string, DestinationFactory> = {
    S3: (config, run) =>
      createS3Destination(config, run, {
        egress: options.egress,
        serverCredentials: options.s3ServerCredentials === true,
      }),
    Postgres: (config, run) => createPostgresDestination(config, run, options.egress),
    HTTP: (config, run) => createHttpDestination(config, run, DEFAULT_HTTP_DESTINATION_OPTIONS, fetch),
    NoOp: createNoOpDestination,
  };
  return Object.fromEntries(
    Object.entries(destinations).map(([type, factory]) => [type, withBoundedErrors(factory)]),
  );
}

/** In place, so that its class (retryable or not) and cause stay. */
export function boundErrorMessage<T>(error: T): T {
  if (error instanceof Error && error.message.length > MAX_DESTINATION_ERROR_CHARS) {
    const cut = error.message.length - MAX_DESTINATION_ERROR_CHARS;
    error.message = `${error.message.slice(0, MAX_DESTINATION_ERROR_CHARS)}… (${cut} more characters)`;
  }
  return error;
}

function withBoundedErrors(factory: DestinationFactory): DestinationFactory {
  return (config, run) => {
    let writer: DestinationWriter;
    try {
      writer = factory(config, run);
    } catch (error) {
      throw boundErrorMessage(error);
    }
    const write = writer.write.bind(writer);
    const finish = writer.finish.bind(writer);
    // NOTE: the writer itself: the runner reads its own fields (and the S3 writer's extra ones).
    return Object.assign(writer, {
      async write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
        try {
          return await write(chunk, signal);
        } catch (error) {
          throw boundErrorMessage(error);
        }
      },
      async finish(signal: AbortSignal): Promise<WriteResult> {
        try {
          return await finish(signal);
        } catch (error) {
          throw boundErrorMessage(error);
        }
      },
    });
  };
}
