export const DEFAULT_PAGE_SIZE = 100;
// Larger values read as "everything" / "past the end": DRF never refuses a limit or offset.
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

/** A limit (`strict`: above 0) or offset, or undefined when the value is not one. */
export function pageParameter(value: unknown, { strict }: { strict: boolean }): number | undefined {
  if (typeof value !== 'string' || !/^\s*\+?\d+\s*$/.test(value)) return undefined;
  const parsed = Math.min(Number(value), MAX_SQL_INTEGER);
  if (strict && parsed === 0) return undefined;
  return parsed;
}

/** DRF's LimitOffsetPagination: a bad `limit` means the default page size, a bad `offset` 0. */
export function pageRequestFrom(query: Record<string, unknown>): PageRequest {
  return {
    limit: pageParameter(query.limit, { strict: true }) ?? DEFAULT_PAGE_SIZE,
    offset: pageParameter(query.offset, { strict: false }) ?? 0,
  };
}

function absoluteUrl(requestUrl: URL, params: Record<string, number | undefined>): string {
  const url = new URL(requestUrl);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) url.searchParams.delete(key);
    else url.searchParams.set(key, String(value));
  }
  // DRF's replace_query_param rebuilds the query string sorted by key.
  url.searchParams.sort();
  return url.toString();
}

/** Links are built on the request's public URL (`@RequestUrl()`). */
export function toPage<T>(url: URL, page: PageRequest, count: number, results: T[]): Page<T> {
  const { limit, offset } = page;
  const next = offset + limit < count ? absoluteUrl(url, { limit, offset: offset + limit }) : null;
  let previous: string | null = null;
  if (offset > 0) {
    previous =
      offset - limit <= 0
        ? absoluteUrl(url, { limit, offset: undefined })
        : absoluteUrl(url, { limit, offset: offset - limit });
  }
  return { count, next, previous, results };
}
