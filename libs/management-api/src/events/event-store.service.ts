import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { ClickHouseSettings } from '@clickhouse/client';
import {
  assertDatabaseName,
  closeClickHouse,
  createClickHouse,
  EVENTS_TABLE,
  exceededQueryLimit,
  queryLimitSettings,
  type ClickHouseClient,
  type ClickHouseConnectionConfig,
  type QueryLimits,
} from '@hogbase/clickhouse';
import { ApiError } from '../common/api.error';

export const EVENT_STORE_CONNECTION = Symbol('EVENT_STORE_CONNECTION');

/**
 * An expensive expression must end as an error, not hold the engine. The result is read whole as
 * JSON text, which V8 caps near 512 MB, hence the result bytes bound.
 */
const LISTING_LIMITS: QueryLimits = {
  maxExecutionSeconds: 30,
  maxMemoryBytes: 2_000_000_000,
  maxResultBytes: 256 * 1024 * 1024,
};

const READ_SETTINGS: ClickHouseSettings = {
  ...queryLimitSettings(LISTING_LIMITS),
  // Reads only; 2 (not 1) so that the settings above may still be set per query.
  readonly: '2',
  // The table deduplicates within a day, and partitions hold whole days.
  do_not_merge_across_partitions_select_final: 1,
};

/**
 * Opens on first use: a process that never lists events never connects nor, embedded, claims
 * chDB's data path, which another process of a split deployment may hold.
 */
@Injectable()
export class EventStore implements OnApplicationShutdown {
  private client: ClickHouseClient | undefined;
  readonly table: string;

  constructor(
    @Inject(EVENT_STORE_CONNECTION) private readonly connection: ClickHouseConnectionConfig | null,
  ) {
    this.table = connection ? `${assertDatabaseName(connection.database)}.${EVENTS_TABLE}` : EVENTS_TABLE;
  }

  /** Engine failures become API errors. */
  async select<T>(query: string, params: Record<string, unknown>): Promise<T[]> {
    try {
      const result = await this.open().query({
        query,
        query_params: params,
        format: 'JSONEachRow',
        clickhouse_settings: READ_SETTINGS,
      });
      return await result.json<T>();
    } catch (error) {
      throw translateEngineError(error);
    }
  }

  /** With the result's column types, for user-chosen columns. */
  async selectCompact(
    query: string,
    params: Record<string, unknown>,
  ): Promise<{ meta: { name: string; type: string }[]; data: unknown[][] }> {
    try {
      const result = await this.open().query({
        query,
        query_params: params,
        format: 'JSONCompact',
        clickhouse_settings: READ_SETTINGS,
      });
      const { meta = [], data } = await result.json<unknown[][]>();
      return { meta, data };
    } catch (error) {
      throw translateEngineError(error);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await closeClickHouse(client);
  }

  private open(): ClickHouseClient {
    if (!this.connection) {
      throw new ApiError('service_unavailable', 'This process was started without an events store.');
    }
    this.client ??= createClickHouse(this.connection);
    return this.client;
  }
}

/**
 * Keeps ClickHouse's errors (they quote the generated SQL) from the client: over budget is a 400,
 * no answer a 503; anything else is returned for the caller to classify.
 */
export function translateEngineError(error: unknown): unknown {
  if (error instanceof ApiError) return error;
  const { type, code } = (error ?? {}) as { type?: unknown; code?: unknown };
  if (exceededQueryLimit(error) !== undefined) {
    return new ApiError(
      'invalid_input',
      'The query needs more time, memory or result size than a listing may use: narrow it with after/before, event or property filters, or a smaller limit.',
    );
  }
  if (type === 'UNKNOWN_TABLE' || type === 'UNKNOWN_DATABASE') {
    return new ApiError('service_unavailable', 'The events table does not exist yet: run the migrations.');
  }
  if (
    typeof code === 'string' &&
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code)
  ) {
    return new ApiError('service_unavailable', 'ClickHouse does not answer.');
  }
  return error;
}
