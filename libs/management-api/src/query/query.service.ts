import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import { fromClickHouseDateTime64 } from '@hogbase/clickhouse';
import type { Team } from '@hogbase/postgres';
import { HogQLError, HogQLStatementCompiler, QueryParams, type CompiledStatement } from '@hogbase/hogql';
import { ApiError } from '../common/api.error';
import type { QueryRequestDto } from './query.dto';
import type { HogQLQueryResponse } from './query.presenter';
import { QueryCache, RECENT_AGE_MS } from './query-cache.store';
import { ConcurrencyLimiter } from './query-limiter.util';
import { queryIdFor, QueryStore } from './query-store.service';
import { QueryTasks, type QueryStatus } from './query-tasks.store';

/** The kinds PostHog's Query API takes that this one does not run yet: a 400 saying so. */
const KINDS_NOT_YET = new Set([
  'EventsQuery',
  'TrendsQuery',
  'FunnelsQuery',
  'RetentionQuery',
  'LifecycleQuery',
  'StickinessQuery',
  'PathsQuery',
  'ActorsQuery',
  'InsightActorsQuery',
]);

const HOGQL_QUERY_KEYS = new Set([
  'kind',
  'query',
  'values',
  'modifiers',
  'name',
  'filters',
  'variables',
  'response',
]);

/** How a request may use the cache and whether it waits (PostHog's ExecutionMode). */
type ExecutionMode =
  | 'recent_cache_blocking'
  | 'always_blocking'
  | 'recent_cache_async'
  | 'always_async'
  | 'extended_cache_async'
  | 'recent_cache_async_blocking_on_miss';

/** PostHog's execution_mode_from_refresh, after the query endpoint turns cache-only into blocking. */
function executionMode(request: QueryRequestDto): ExecutionMode {
  if (request.async === true && request.refresh === undefined) return 'recent_cache_async';
  switch (request.refresh) {
    case true:
    case 'force_blocking':
      return 'always_blocking';
    case 'async':
      return 'recent_cache_async';
    case 'force_async':
      return 'always_async';
    case 'lazy_async':
      return 'extended_cache_async';
    case 'async_except_on_cache_miss':
      return 'recent_cache_async_blocking_on_miss';
    default:
      return 'recent_cache_blocking';
  }
}

/** Per project and in all: past them queries wait their turn. */
export const QUERY_CONCURRENCY = { perProject: 3, total: 8 };

interface PreparedQuery {
  cacheKey: string;
  /** Runs it: the answer, without the cache's fields. */
  execute(signal?: AbortSignal, clickhouseQueryId?: string): Promise<Omit<HogQLQueryResponse, CacheFields>>;
}

type CacheFields = 'is_cached' | 'last_refresh' | 'cache_key' | 'timezone' | 'query_status';

export type QueryAnswer =
  HogQLQueryResponse | { cache_key: string; query_status: QueryStatus; is_cached: false; timezone: string };

/** PostHog's Query API (posthog/api/query.py): a query in, its answer out, bound to one project. */
@Injectable()
export class QueryService {
  private readonly compiler = new HogQLStatementCompiler();
  private readonly limiter = new ConcurrencyLimiter(QUERY_CONCURRENCY.perProject, QUERY_CONCURRENCY.total);

  constructor(
    private readonly store: QueryStore,
    private readonly cache: QueryCache,
    private readonly tasks: QueryTasks,
  ) {}

  async run(team: Team, request: QueryRequestDto): Promise<QueryAnswer> {
    for (const override of ['filters_override', 'variables_override'] as const) {
      const value = request[override];
      if (value !== undefined && value !== null && !isEmptyObject(value)) {
        throw new ApiError(
          'invalid_input',
          `${override} is for dashboards, which this server does not have.`,
          override,
        );
      }
    }
    const prepared = await this.prepare(team, request.query);
    const mode = executionMode(request);
    const held = this.cache.get(team.id, prepared.cacheKey);
    const maxAge = mode === 'extended_cache_async' ? Number.POSITIVE_INFINITY : RECENT_AGE_MS;
    const fresh =
      held !== undefined &&
      mode !== 'always_blocking' &&
      mode !== 'always_async' &&
      Date.now() - held.lastRefresh.getTime() <= maxAge;
    if (fresh) return { ...held.answer, is_cached: true, last_refresh: held.lastRefresh.toISOString() };
    const blocking =
      mode === 'recent_cache_blocking' ||
      mode === 'always_blocking' ||
      (mode === 'recent_cache_async_blocking_on_miss' && !held);
    if (blocking) return this.calculate(team, prepared);

    const id = request.client_query_id ?? randomUUID();
    const clickhouseQueryId = queryIdFor(team.id);
    const status = this.tasks.start(
      team.id,
      id,
      clickhouseQueryId,
      async (signal) => {
        const answer = await this.calculate(team, prepared, signal, clickhouseQueryId);
        return answer.results;
      },
      (error) => (error instanceof ApiError && Number(error.status) < 500 ? error.detail : null),
    );
    if (held) {
      return {
        ...held.answer,
        is_cached: true,
        last_refresh: held.lastRefresh.toISOString(),
        query_status: status,
      };
    }
    return { cache_key: prepared.cacheKey, query_status: status, is_cached: false, timezone: team.timezone };
  }

  /** The status of an async query of this project; 404 for one it does not know. */
  status(team: Team, id: string): QueryStatus {
    const status = this.tasks.get(team.id, id);
    if (!status) throw new ApiError('not_found', 'Not found.');
    return status;
  }

  /** Cancels an async query of this project, stopping its ClickHouse query. */
  async cancel(team: Team, id: string): Promise<string> {
    const cancelled = this.tasks.cancel(team.id, id);
    if (!cancelled) throw new ApiError('not_found', 'Not found.');
    if (!cancelled.running) return 'Query has already finished.';
    await this.store.kill(cancelled.clickhouseQueryId);
    return 'Query cancelled.';
  }

  private async calculate(
    team: Team,
    prepared: PreparedQuery,
    signal?: AbortSignal,
    clickhouseQueryId = queryIdFor(team.id),
  ): Promise<HogQLQueryResponse> {
    const answer = await this.limiter.run(
      String(team.id),
      () => prepared.execute(signal, clickhouseQueryId),
      signal,
    );
    const lastRefresh = new Date();
    const full: HogQLQueryResponse = {
      ...answer,
      is_cached: false,
      last_refresh: lastRefresh.toISOString(),
      cache_key: prepared.cacheKey,
      timezone: team.timezone,
      query_status: null,
    };
    this.cache.set(team.id, prepared.cacheKey, full, lastRefresh);
    return full;
  }

  /** Checks and compiles the query: its errors are the request's 400, before anything runs. */
  private async prepare(team: Team, query: Record<string, unknown>): Promise<PreparedQuery> {
    const kind = query.kind;
    if (kind === 'HogQLQuery') return this.prepareHogQL(team, query);
    if (typeof kind !== 'string') throw new ApiError('required', 'This field is required.', 'query__kind');
    if (KINDS_NOT_YET.has(kind)) {
      throw new ApiError(
        'invalid_input',
        `${kind} is not supported by this server yet; use a HogQLQuery.`,
        'query__kind',
      );
    }
    throw new ApiError('invalid_input', `Unknown query kind "${kind}".`, 'query__kind');
  }

  private async prepareHogQL(team: Team, query: Record<string, unknown>): Promise<PreparedQuery> {
    for (const key of Object.keys(query)) {
      if (!HOGQL_QUERY_KEYS.has(key)) {
        throw new ApiError('invalid_input', `Extra inputs are not permitted: ${key}.`, `query__${key}`);
      }
    }
    const text = query.query;
    if (typeof text !== 'string')
      throw new ApiError('required', 'HogQLQuery needs its query, a string.', 'query__query');
    const values = query.values ?? {};
    if (typeof values !== 'object' || values === null || Array.isArray(values)) {
      throw new ApiError(
        'invalid_input',
        'values must be a dictionary of placeholder values.',
        'query__values',
      );
    }
    for (const key of ['filters', 'variables'] as const) {
      if (query[key] !== undefined && query[key] !== null && !isEmptyObject(query[key])) {
        throw new ApiError('invalid_input', `HogQLQuery ${key} are not supported yet.`, `query__${key}`);
      }
    }
    const params = new QueryParams();
    const started = performance.now();
    let compiled: CompiledStatement;
    try {
      compiled = await this.compiler.compile(text, {
        database: this.store.database,
        teamId: team.id,
        params,
        values: values as Record<string, unknown>,
      });
    } catch (error) {
      if (error instanceof HogQLError) throw new ApiError('invalid_input', error.message, 'query');
      throw error;
    }
    const compileSeconds = (performance.now() - started) / 1000;
    return {
      cacheKey: cacheKey(team.id, { kind: 'HogQLQuery', query: text, values }),
      execute: async (signal, clickhouseQueryId = queryIdFor(team.id)) => {
        const executing = performance.now();
        const rows = await this.store.select(compiled.sql, params.values, clickhouseQueryId, signal);
        const executeSeconds = (performance.now() - executing) / 1000;
        const dateTimeColumns = rows.meta.map((column) => /^(Nullable\()?DateTime/.test(column.type));
        return {
          results: rows.data
            .slice(0, compiled.limit)
            .map((row) =>
              row.map((value, index) =>
                dateTimeColumns[index] && typeof value === 'string' ? fromClickHouseDateTime64(value) : value,
              ),
            ),
          columns: compiled.columns,
          types: compiled.columns.map((name, index): [string, string] => [
            name,
            rows.meta[index]?.type ?? 'String',
          ]),
          hasMore: rows.data.length > compiled.limit,
          limit: compiled.limit,
          offset: compiled.offset,
          query: text,
          hogql: text,
          clickhouse: compiled.sql,
          timings: [
            { k: './compile', t: compileSeconds },
            { k: './execute', t: executeSeconds },
            { k: '.', t: compileSeconds + executeSeconds },
          ],
          modifiers: {},
          error: null,
        };
      },
    };
  }
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/** The same for the same project and the same query, whatever the order of its keys. */
function cacheKey(teamId: number, query: Record<string, unknown>): string {
  const hash = createHash('sha256')
    .update(`${teamId}:${stableJson(query)}`)
    .digest('hex');
  return `cache_${hash.slice(0, 32)}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
