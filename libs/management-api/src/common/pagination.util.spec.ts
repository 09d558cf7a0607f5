import type { Request, Response } from 'express';
import { DEFAULT_PAGE_SIZE, pageRequestFrom, toPage } from './pagination.util';
import { publicOriginMiddleware, publicRequestUrl } from './public-url.util';

/** A request as the app sees it once the public-origin middleware ran, with a Host header that must be ignored. */
function request(url: string): URL {
  const incoming = {
    originalUrl: url,
    protocol: 'http',
    host: 'attacker.test',
    get: () => 'attacker.test',
  } as unknown as Request;
  publicOriginMiddleware({ siteUrl: 'http://api.test:8000', trustProxy: false })(
    incoming,
    {} as Response,
    () => undefined,
  );
  return publicRequestUrl(incoming);
}

describe('pageRequestFrom', () => {
  it.each([
    [{}, DEFAULT_PAGE_SIZE, 0],
    [{ limit: '10', offset: '20' }, 10, 20],
    [{ limit: '0' }, DEFAULT_PAGE_SIZE, 0],
    [{ limit: '-5', offset: '-1' }, DEFAULT_PAGE_SIZE, 0],
    [{ limit: 'ten', offset: '1.5' }, DEFAULT_PAGE_SIZE, 0],
    [{ limit: '99999999999999999999' }, 2 ** 31 - 1, 0],
    [{ limit: '5', offset: '99999999999999999999' }, 5, 2 ** 31 - 1],
    [{ limit: ['1', '2'] }, DEFAULT_PAGE_SIZE, 0],
  ])('reads %j as limit %d offset %d, as DRF does', (query, limit, offset) => {
    expect(pageRequestFrom(query)).toEqual({ limit, offset });
  });
});

describe('toPage', () => {
  it('links the next and previous pages with absolute URLs', () => {
    const page = toPage(request('/api/x/?limit=2&offset=4&q=1'), { limit: 2, offset: 4 }, 10, []);
    expect(page.next).toBe('http://api.test:8000/api/x/?limit=2&offset=6&q=1');
    expect(page.previous).toBe('http://api.test:8000/api/x/?limit=2&offset=2&q=1');
  });

  it('drops offset from previous when it would reach the first page, and has no next at the end', () => {
    const page = toPage(request('/api/x/?limit=5&offset=3'), { limit: 5, offset: 3 }, 8, []);
    expect(page.next).toBeNull();
    expect(page.previous).toBe('http://api.test:8000/api/x/?limit=5');
  });

  it('has no previous on the first page', () => {
    expect(toPage(request('/api/x/'), { limit: 100, offset: 0 }, 0, []).previous).toBeNull();
  });
});
