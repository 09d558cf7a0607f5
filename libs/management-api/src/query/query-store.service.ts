import { randomUUID } from 'node:crypto';
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

/** What `queryIdFor` makes: safe inside a SQL comment. */
const QUERY_ID = /^hogbase-query:\d+:[0-9a-f-]{36}$/;

/** An id for one run of a query of the project. */
export function queryIdFor(teamId: number): string {
  return `hogbase-query:${teamId}:${randomUUID()}`;
}

export interface QueryRows {
  meta: { name: string; type: string }[];
  data: unknown[][];
}

/**
 * The Query API's reads, on clients of its own: chDB keeps settings per client session, and these
 * limits are not the event listing's. TRICKY: a chDB connection runs one query at a time, so each
 * running query takes a client of the pool (as many as queries may run at once), and a cancel goes
 * through a client of its own, or it would wait behind the query it kills.
 */
@Injectable()
export class QueryStore implements OnApplicationShutdown {
  private readonly idle: ClickHouseClient[] = [];
  private readonly opened: ClickHouseClient[] = [];
  private control: ClickHouseClient | undefined;
  readonly database: string;

  constructor(
    @Inject(EVENT_STORE_CONNECTION) private readonly connection: ClickHouseConnectionConfig | null,
  ) {
    this.database = connection ? assertDatabaseName(connection.database) : '';
  }

  /** Over a limit is a 400 naming it; an error the user's query caused is a 400 saying which. */
  async select(
    query: string,
    params: Record<string, unknown>,
    queryId: string,
    signal?: AbortSignal,
  ): Promise<QueryRows> {
    const client = this.take();
    try {
      const result = await client.query({
        // chDB gives queries ids of its own: the marker is how a cancel finds this one there.
        query: `/* ${queryId} */ ${query}`,
        query_params: params,
        query_id: queryId,
        format: 'JSONCompact',
        clickhouse_settings: QUERY_SETTINGS,
        abort_signal: signal,
      });
      const { meta = [], data } = await result.json<unknown[][]>();
      return { meta, data };
    } catch (error) {
      const limit = exceededQueryLimit(error);
      if (limit !== undefined) throw new ApiError('invalid_input', LIMIT_MESSAGES[limit]);
      const userError = hogqlErrorFromClickHouse(error, 'hogql_query');
      if (userError) throw new ApiError('invalid_input', userError.message, 'query');
      throw translateEngineError(error);
    } finally {
      // An aborted query may still run on its connection, and the next one would wait behind it.
      if (signal?.aborted) this.discard(client);
      else this.idle.push(client);
    }
  }

  /** Stops a running query by the id this service gave it (never a client's). */
  async kill(queryId: string): Promise<void> {
    if (!QUERY_ID.test(queryId)) throw new Error(`Not a query id of this service: ${queryId}`);
    this.control ??= this.connect();
    await this.control.command({
      query: 'KILL QUERY WHERE query_id = {id:String} OR position(query, {marker:String}) > 0 ASYNC',
      query_params: { id: queryId, marker: `/* ${queryId} */` },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    const clients = [...this.opened, ...(this.control ? [this.control] : [])];
    this.opened.length = 0;
    this.idle.length = 0;
    this.control = undefined;
    await Promise.all(clients.map((client) => closeClickHouse(client)));
  }

  private discard(client: ClickHouseClient): void {
    const index = this.opened.indexOf(client);
    if (index >= 0) this.opened.splice(index, 1);
    void closeClickHouse(client).catch(() => undefined);
  }

  /** An idle client, or a new one: the concurrency limiter bounds how many run at once. */
  private take(): ClickHouseClient {
    const client = this.idle.pop();
    if (client) return client;
    const created = this.connect();
    this.opened.push(created);
    return created;
  }

  private connect(): ClickHouseClient {
    if (!this.connection) {
      throw new ApiError('service_unavailable', 'This process was started without an events store.');
    }
    return createClickHouse(this.connection);
  }
}
