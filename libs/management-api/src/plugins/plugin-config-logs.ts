import type { EntityManager } from 'typeorm';
import { PluginLogEntry, type PluginConfig } from '@hogbase/postgres';
import { validationError } from '../common/api-error';
import { presentLogEntry, type PluginLogEntryResponse } from './plugin.presenter';

const LOG_TYPES = ['DEBUG', 'LOG', 'INFO', 'WARN', 'ERROR'];
const DEFAULT_LOG_LIMIT = 50;
const MAX_LOG_LIMIT = 500;

export interface LogPage {
  count: number;
  next: null;
  previous: null;
  results: PluginLogEntryResponse[];
}

/** A config's log lines, newest first: `limit`, `type_filter` (comma list), `search`, `after`, `before`. */
export async function logPage(
  manager: EntityManager,
  config: PluginConfig,
  query: Record<string, unknown>,
): Promise<LogPage> {
  const builder = manager
    .getRepository(PluginLogEntry)
    .createQueryBuilder('entry')
    .where('entry.plugin_config_id = :configId', { configId: config.id })
    .andWhere('entry.team_id = :teamId', { teamId: config.teamId });
  const types =
    typeof query.type_filter === 'string' && query.type_filter !== ''
      ? query.type_filter.split(',').map((type) => type.trim().toUpperCase())
      : [];
  const unknownType = types.find((type) => !LOG_TYPES.includes(type));
  if (unknownType)
    throw validationError(`"${unknownType}" is not a valid choice.`, 'type_filter', 'invalid_choice');
  if (types.length) builder.andWhere('entry.type IN (:...types)', { types });
  if (typeof query.search === 'string' && query.search !== '') {
    builder.andWhere("entry.message ILIKE :search ESCAPE '\\'", {
      search: `%${query.search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`,
    });
  }
  for (const [name, operator] of [
    ['after', '>'],
    ['before', '<'],
  ] as const) {
    const value = query[name];
    if (value === undefined || value === '') continue;
    const date = typeof value === 'string' ? new Date(value) : new Date(Number.NaN);
    if (Number.isNaN(date.getTime())) throw validationError('Datetime has wrong format.', name, 'invalid');
    builder.andWhere(`entry.timestamp ${operator} :${name}`, { [name]: date });
  }
  const limitText = typeof query.limit === 'string' ? query.limit : '';
  const limit =
    /^\d+$/.test(limitText) && Number(limitText) > 0
      ? Math.min(Number(limitText), MAX_LOG_LIMIT)
      : DEFAULT_LOG_LIMIT;
  const [entries, count] = await builder
    .orderBy('entry.timestamp', 'DESC')
    .addOrderBy('entry.id', 'DESC')
    .take(limit)
    .getManyAndCount();
  return { count, next: null, previous: null, results: entries.map(presentLogEntry) };
}
