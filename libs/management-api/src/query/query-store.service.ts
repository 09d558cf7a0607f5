import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { ClickHouseSettings } from '@clickhouse/client';
import {
  assertDatabaseName,
  closeClickHouse,
  createClickHouse,
  exceededQueryLimit,
  queryLimitSettings,
  type ClickHouseClient,
  type ClickHouseConnectionConfig,
  type ExceededQueryLimit,
  type QueryLimits,
} from '@hogbase/clickhouse';
import { hogqlErrorFromClickHouse } from '@hogbase/hogql';
import { ApiError } from '../common/api.error';
import { EVENT_STORE_CONNECTION, translateEngineError } from '../events/event-store.service';

/** PostHog's HogQLGlobalSettings give a query 60 s (posthog/hogql/constants.py); the rest bounds the engine. */
export const QUERY_LIMITS: Required<QueryLimits> = {
  maxExecutionSeconds: 60,
  maxMemoryBytes: 4_000_000_000,
  maxResultBytes: 256 * 1024 * 1024,
  maxRowsToRead: 2_000_000_000,
};

const QUERY_SETTINGS: ClickHouseSettings = {
  ...queryLimitSettings(QUERY_LIMITS),
  // Reads only; 2 (not 1) so that the settings above may still be set per query.
  readonly: '2',
  // The table deduplicates within a day, and partitions hold whole days.
  do_not_merge_across_partitions_select_final: 1,
  // PostHog answers counts as JSON numbers (past 2^53 a JavaScript client rounds them either way).
  output_format_json_quote_64bit_integers: 0,
};

const LIMIT_MESSAGES: Record<ExceededQueryLimit, string> = {
  time: `The query ran longer than the ${QUERY_LIMITS.maxExecutionSeconds} s a query may take: narrow its date range or filters.`,
  memory: `The query needed more than the ${QUERY_LIMITS.maxMemoryBytes / 1e9} GB of memory a query may use: aggregate less, or narrow it.`,
  result: `The query's result is larger than the ${QUERY_LIMITS.maxResultBytes / 1024 / 1024} MiB a query may return: select fewer rows or columns.`,
  rows: `The query read more than the ${QUERY_LIMITS.maxRowsToRead.toLocaleString('en-US')} rows a query may read: narrow its date range or filters.`,
};

export interface QueryRows {
  meta: { name: string; type: string }[];
  data: unknown[][];
}

/**
 * The Query API's reads, on a client of its own: chDB keeps settings per client session, and these
 * limits are not the event listing's.
 */
@Injectable()
export class QueryStore implements OnApplicationShutdown {
  private client: ClickHouseClient | undefined;
  readonly database: string;

  constructor(
    @Inject(EVENT_STORE_CONNECTION) private readonly connection: ClickHouseConnectionConfig | null,
  ) {
    this.database = connection ? assertDatabaseName(connection.database) : '';
  }

  /** Over a limit is a 400 naming it; an error the user's query caused is a 400 saying which. */
  async select(query: string, params: Record<string, unknown>, queryId: string): Promise<QueryRows> {
    try {
      const result = await this.open().query({
        query,
        query_params: params,
        query_id: queryId,
        format: 'JSONCompact',
        clickhouse_settings: QUERY_SETTINGS,
      });
      const { meta = [], data } = await result.json<unknown[][]>();
      return { meta, data };
    } catch (error) {
      const limit = exceededQueryLimit(error);
      if (limit !== undefined) throw new ApiError('invalid_input', LIMIT_MESSAGES[limit]);
      const userError = hogqlErrorFromClickHouse(error, 'hogql_query');
      if (userError) throw new ApiError('invalid_input', userError.message, 'query');
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
