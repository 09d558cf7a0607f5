import type { RouteEntry } from './route-table.util';

interface CompiledRoute {
  method: string;
  pattern: RegExp;
  /** One character per segment, `1` for a literal and `0` for a parameter: the larger, the more specific. */
  specificity: string;
}

/**
 * A known path asked with another method gets DRF's 405 with `Allow`, not Express's 404. A path is
 * the resource of its most specific route, as DRF resolves it: `feature_flags/activity` is not
 * also a flag whose id is `activity`.
 */
export class RouteMatcher {
  private routes: CompiledRoute[] = [];

  load(routes: RouteEntry[]): void {
    this.routes = routes.map((route) => {
      const segments = route.path.split('/');
      return {
        method: route.method,
        specificity: segments.map((segment) => (segment.startsWith(':') ? '0' : '1')).join(''),
        pattern: new RegExp(
          `^${segments
            .map((segment) =>
              segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
            )
            .join('/')}/?$`,
        ),
      };
    });
  }

  methodsFor(path: string): string[] {
    const pathname = path.split('?')[0];
    const matching = this.routes.filter(({ pattern }) => pattern.test(pathname));
    const mostSpecific = matching.reduce(
      (best, { specificity }) => (specificity > best ? specificity : best),
      '',
    );
    const methods = new Set(
      matching.filter(({ specificity }) => specificity === mostSpecific).map(({ method }) => method),
    );
    return [...methods].sort();
  }

  /** Whether the path's resource answers `method` (HEAD is answered wherever GET is), or is unknown. */
  allows(path: string, method: string): boolean {
    const methods = this.methodsFor(path);
    return methods.length === 0 || methods.includes(method === 'HEAD' ? 'GET' : method);
  }
}
