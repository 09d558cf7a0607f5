import { createHash, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Injectable } from '@nestjs/common';
import type { Team } from '@hogbase/postgres';
import { HogQLError, HogQLStatementCompiler, QueryParams } from '@hogbase/hogql';
import { ApiError } from '../common/api.error';
import type { QueryRequestDto } from './query.dto';
import type { HogQLQueryResponse } from './query.presenter';
import { QueryStore } from './query-store.service';

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

/** PostHog's Query API (posthog/api/query.py): a query in, its answer out, bound to one project. */
@Injectable()
export class QueryService {
  private readonly compiler = new HogQLStatementCompiler();

  constructor(private readonly store: QueryStore) {}

  async run(team: Team, request: QueryRequestDto): Promise<HogQLQueryResponse> {
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
    const { query } = request;
    const kind = query.kind;
    if (kind === 'HogQLQuery') return this.hogql(team, query);
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

  private async hogql(team: Team, query: Record<string, unknown>): Promise<HogQLQueryResponse> {
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
    let compiled;
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
    const compiledAt = performance.now();
    const rows = await this.store.select(compiled.sql, params.values, `hogbase-${team.id}-${randomUUID()}`);
    const ranAt = performance.now();

    const dateTimeColumns = rows.meta.map((column) => /^(Nullable\()?DateTime/.test(column.type));
    return {
      results: rows.data
        .slice(0, compiled.limit)
        .map((row) => row.map((value, index) => (dateTimeColumns[index] ? isoDateTime(value) : value))),
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
        { k: './compile', t: (compiledAt - started) / 1000 },
        { k: './execute', t: (ranAt - compiledAt) / 1000 },
        { k: '.', t: (ranAt - started) / 1000 },
      ],
      modifiers: {},
      error: null,
      is_cached: false,
      last_refresh: new Date().toISOString(),
      cache_key: cacheKey(team.id, query),
      timezone: team.timezone,
      query_status: null,
    };
  }
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

/** ClickHouse's `YYYY-MM-DD hh:mm:ss[.ffffff]` in UTC as ISO 8601, as PostHog returns date-times. */
function isoDateTime(value: unknown): unknown {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/.test(value)) return value;
  return `${value.replace(' ', 'T')}Z`;
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
