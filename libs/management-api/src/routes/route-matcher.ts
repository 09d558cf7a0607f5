import type { RouteEntry } from './route-table';

/**
 * Knows which methods each path of the API answers, so a known path asked with another method gets
 * 405 with `Allow` (as DRF answers) instead of Express's 404.
 */
export class RouteMatcher {
  private patterns: { pattern: RegExp; method: string }[] = [];

  load(routes: RouteEntry[]): void {
    this.patterns = routes.map((route) => ({
      method: route.method,
      pattern: new RegExp(
        `^${route.path
          .split('/')
          .map((segment) =>
            segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
          )
          .join('/')}/?$`,
      ),
    }));
  }

  methodsFor(path: string): string[] {
    const pathname = path.split('?')[0];
    const methods = new Set(
      this.patterns.filter(({ pattern }) => pattern.test(pathname)).map(({ method }) => method),
    );
    return [...methods].sort();
  }
}
