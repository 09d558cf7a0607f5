import { RouteMatcher } from './route-matcher.service';
import type { RouteEntry } from './route-table.util';

const route = (method: string, path: string): RouteEntry => ({
  method,
  path,
  handler: 'test',
  rule: undefined,
});

describe('RouteMatcher', () => {
  const matcher = new RouteMatcher();
  matcher.load([
    route('GET', '/api/projects/:project_id/feature_flags'),
    route('POST', '/api/projects/:project_id/feature_flags'),
    route('GET', '/api/projects/:project_id/feature_flags/:id'),
    route('PATCH', '/api/projects/:project_id/feature_flags/:id'),
    route('DELETE', '/api/projects/:project_id/feature_flags/:id'),
    route('GET', '/api/projects/:project_id/feature_flags/activity'),
    route('POST', '/api/projects/:project_id/feature_flags/user_blast_radius'),
  ]);

  it('answers the methods of a static action path alone, not those of the :id route beside it', () => {
    expect(matcher.methodsFor('/api/projects/2/feature_flags/activity/')).toEqual(['GET']);
    expect(matcher.methodsFor('/api/projects/2/feature_flags/user_blast_radius')).toEqual(['POST']);
  });

  it('answers the :id route for any other value there, with or without a trailing slash or query', () => {
    expect(matcher.methodsFor('/api/projects/2/feature_flags/17/')).toEqual(['DELETE', 'GET', 'PATCH']);
    expect(matcher.methodsFor('/api/projects/@current/feature_flags/17?x=1')).toEqual([
      'DELETE',
      'GET',
      'PATCH',
    ]);
    expect(matcher.methodsFor('/api/projects/2/feature_flags')).toEqual(['GET', 'POST']);
  });

  it('knows no methods for a path no route matches, and allows any method there (the 404 is routing’s)', () => {
    expect(matcher.methodsFor('/api/projects/2/unknown/')).toEqual([]);
    expect(matcher.allows('/api/projects/2/unknown/', 'DELETE')).toBe(true);
  });

  it('refuses a method the most specific route does not serve, and takes HEAD where GET is served', () => {
    expect(matcher.allows('/api/projects/2/feature_flags/activity/', 'DELETE')).toBe(false);
    expect(matcher.allows('/api/projects/2/feature_flags/activity/', 'HEAD')).toBe(true);
    expect(matcher.allows('/api/projects/2/feature_flags/17/', 'DELETE')).toBe(true);
  });
});
