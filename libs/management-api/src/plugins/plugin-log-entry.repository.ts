import type { EntityManager } from 'typeorm';
import { PluginLogEntry, type PluginConfig } from '@hogbase/postgres';
import { validationError } from '../common/api-error';
import type { PageRequest } from '../common/pagination.util';
import { PLUGIN_LOG_TYPES, presentLogEntry, type PluginLogEntryResponse } from './plugin.presenter';

export const DEFAULT_LOG_LIMIT = 50;
export const MAX_LOG_LIMIT = 500;
/** Postgres's OFFSET is a bigint; past this an offset is simply past the end. */
const MAX_OFFSET = 2 ** 31 - 1;

export interface LogPage {
  page: PageRequest;
  count: number;
  results: PluginLogEntryResponse[];
}

/** One value of a query parameter: a repeated one is refused as a bad value. */
function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw validationError(`${name} must be given once.`, name);
}

/**
 * `limit` (50 by default, at most 500) and `offset`, refused when they are not integers, as
 * PostHog's LogEntry API refuses a `limit` that is not one.
 */
function logPageRequest(query: Record<string, unknown>): PageRequest {
  const limit = single(query, 'limit');
  const offset = single(query, 'offset');
  if (limit !== undefined && limit !== '' && (!/^\s*\+?\d+\s*$/.test(limit) || Number(limit) < 1)) {
    throw validationError('limit must be a positive integer.', 'limit');
  }
  if (offset !== undefined && offset !== '' && !/^\s*\+?\d+\s*$/.test(offset)) {
    throw validationError('offset must be a non-negative integer.', 'offset');
  }
  return {
    limit: limit ? Math.min(Number(limit), MAX_LOG_LIMIT) : DEFAULT_LOG_LIMIT,
    offset: offset ? Math.min(Number(offset), MAX_OFFSET) : 0,
  };
}

/**
 * A page of a config's log lines, newest first: `limit`, `offset`, `type_filter` (comma list),
 * `search`, `after`, `before`; `count` is the number of lines the filters keep.
 */
export async function logPage(
  manager: EntityManager,
  config: PluginConfig,
  query: Record<string, unknown>,
): Promise<LogPage> {
  const page = logPageRequest(query);
  const builder = manager
    .getRepository(PluginLogEntry)
    .createQueryBuilder('entry')
    .where('entry.plugin_config_id = :configId', { configId: config.id })
    .andWhere('entry.team_id = :teamId', { teamId: config.teamId });
  // PostHog repeats the parameter (`getlist`); a comma list is taken too.
  const types = [query.type_filter]
    .flat()
    .filter((value): value is string => typeof value === 'string' && value !== '')
    .flatMap((value) => value.split(','))
    .map((type) => type.trim().toUpperCase())
    .filter((type) => type !== '');
  const unknownType = types.find((type) => !PLUGIN_LOG_TYPES.includes(type));
  if (unknownType)
    throw validationError(`"${unknownType}" is not a valid choice.`, 'type_filter', 'invalid_choice');
  if (types.length) builder.andWhere('entry.type IN (:...types)', { types });
  const search = single(query, 'search');
  if (search) {
    builder.andWhere("entry.message ILIKE :search ESCAPE '\\'", {
      search: `%${search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`,
    });
  }
  for (const [name, operator] of [
    ['after', '>'],
    ['before', '<'],
  ] as const) {
    const value = single(query, name);
    if (value === undefined || value === '') continue;
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) throw validationError('Datetime has wrong format.', name, 'invalid');
    builder.andWhere(`entry.timestamp ${operator} :${name}`, { [name]: date });
  }
  const [entries, count] = await builder
    .orderBy('entry.timestamp', 'DESC')
    .addOrderBy('entry.id', 'DESC')
    .skip(page.offset)
    .take(page.limit)
    .getManyAndCount();
  return { page, count, results: entries.map(presentLogEntry) };
}
