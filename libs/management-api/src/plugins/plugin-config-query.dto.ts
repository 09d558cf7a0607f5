import { Allow } from 'class-validator';
import { validationError } from '../common/api.error';
import type { PageRequest } from '../common/pagination.util';
import { PLUGIN_LOG_TYPES } from './plugin.presenter';

export const DEFAULT_LOG_LIMIT = 50;
export const MAX_LOG_LIMIT = 500;
/** Postgres's OFFSET is a bigint; past this an offset is simply past the end. */
const MAX_OFFSET = 2 ** 31 - 1;

export interface LogFilter {
  /** Levels, upper case; none keeps every level. */
  types: string[];
  search: string | null;
  after: Date | null;
  before: Date | null;
}

export interface LogQuery {
  page: PageRequest;
  filter: LogFilter;
}

/**
 * Kept as sent and read once the config is found: PostHog looks the config up first, so an
 * unknown config stays a 404 whatever the parameters hold.
 */
export class PluginLogsQueryDto {
  @Allow()
  limit?: unknown;

  @Allow()
  offset?: unknown;

  @Allow()
  type_filter?: unknown;

  @Allow()
  search?: unknown;

  @Allow()
  after?: unknown;

  @Allow()
  before?: unknown;

  /** `type_filter` is repeated (PostHog's `getlist`) or a comma list. */
  read(): LogQuery {
    const limit = single(this.limit, 'limit');
    const offset = single(this.offset, 'offset');
    if (limit !== undefined && limit !== '' && (!/^\s*\+?\d+\s*$/.test(limit) || Number(limit) < 1)) {
      throw validationError('limit must be a positive integer.', 'limit');
    }
    if (offset !== undefined && offset !== '' && !/^\s*\+?\d+\s*$/.test(offset)) {
      throw validationError('offset must be a non-negative integer.', 'offset');
    }
    const page = {
      limit: limit ? Math.min(Number(limit), MAX_LOG_LIMIT) : DEFAULT_LOG_LIMIT,
      offset: offset ? Math.min(Number(offset), MAX_OFFSET) : 0,
    };
    const types = [this.type_filter]
      .flat()
      .filter((value): value is string => typeof value === 'string' && value !== '')
      .flatMap((value) => value.split(','))
      .map((type) => type.trim().toUpperCase())
      .filter((type) => type !== '');
    const unknownType = types.find((type) => !PLUGIN_LOG_TYPES.includes(type));
    if (unknownType)
      throw validationError(`"${unknownType}" is not a valid choice.`, 'type_filter', 'invalid_choice');
    const search = single(this.search, 'search');
    return {
      page,
      filter: {
        types,
        search: search ? search : null,
        after: date(this.after, 'after'),
        before: date(this.before, 'before'),
      },
    };
  }
}

function single(value: unknown, name: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw validationError(`${name} must be given once.`, name);
}

function date(value: unknown, name: string): Date | null {
  const text = single(value, name);
  if (text === undefined || text === '') return null;
  const parsed = new Date(text);
  if (Number.isNaN(parsed.getTime())) throw validationError('Datetime has wrong format.', name, 'invalid');
  return parsed;
}
