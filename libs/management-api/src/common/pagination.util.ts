import type { Request } from 'express';
import { publicRequestUrl } from './public-url.util';

export const DEFAULT_PAGE_SIZE = 100;
// Postgres LIMIT/OFFSET are bigint: a value past this one (even past bigint, where SQL would fail) is
// read as "everything" / "past the end" rather than refused, since DRF never refuses a limit or offset.
const MAX_SQL_INTEGER = 2 ** 31 - 1;

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

function positiveInteger(value: unknown, { strict }: { strict: boolean }): number | undefined {
  if (typeof value !== 'string' || !/^\s*\+?\d+\s*$/.test(value)) return undefined;
  const parsed = Math.min(Number(value), MAX_SQL_INTEGER);
  if (strict && parsed === 0) return undefined;
  return parsed;
}

/**
 * DRF's LimitOffsetPagination, which PostHog uses: a `limit` that is not a positive integer falls
 * back to the default page size, a bad `offset` to 0; neither is an error.
 */
export function pageRequestFrom(query: Record<string, unknown>): PageRequest {
  return {
    limit: positiveInteger(query.limit, { strict: true }) ?? DEFAULT_PAGE_SIZE,
    offset: positiveInteger(query.offset, { strict: false }) ?? 0,
  };
}

function absoluteUrl(request: Request, params: Record<string, number | undefined>): string {
  const url = publicRequestUrl(request);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) url.searchParams.delete(key);
    else url.searchParams.set(key, String(value));
  }
  // DRF's replace_query_param rebuilds the query string sorted by key.
  url.searchParams.sort();
  return url.toString();
}

export function toPage<T>(request: Request, page: PageRequest, count: number, results: T[]): Page<T> {
  const { limit, offset } = page;
  const next = offset + limit < count ? absoluteUrl(request, { limit, offset: offset + limit }) : null;
  let previous: string | null = null;
  if (offset > 0) {
    previous =
      offset - limit <= 0
        ? absoluteUrl(request, { limit, offset: undefined })
        : absoluteUrl(request, { limit, offset: offset - limit });
  }
  return { count, next, previous, results };
}
