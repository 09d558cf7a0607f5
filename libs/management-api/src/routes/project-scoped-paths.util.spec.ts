import type { OpenAPIObject } from '@nestjs/swagger';
import type { AccessRule } from '../auth/access.decorator';
import {
  accessRuleForPath,
  documentProjectScopedPaths,
  projectIdFromParams,
  projectPathOf,
  projectScoped,
} from './project-scoped-paths.util';

describe('project-scoped paths', () => {
  const rule: AccessRule = { scope: 'feature_flag:read', projectParam: 'project_id' };

  it('serves a resource under /api/projects/:project_id/ and /api/environments/:environment_id/', () => {
    expect(projectScoped('feature_flags/:feature_flag_id/role_access')).toEqual([
      'api/projects/:project_id/feature_flags/:feature_flag_id/role_access',
      'api/environments/:environment_id/feature_flags/:feature_flag_id/role_access',
    ]);
  });

  it('finds the project under either parameter name, and nothing under an unrelated one', () => {
    expect(projectIdFromParams({ project_id: '7' }, 'project_id')).toBe('7');
    expect(projectIdFromParams({ environment_id: '@current' }, 'project_id')).toBe('@current');
    expect(projectIdFromParams({ id: '9' }, 'id')).toBe('9');
    expect(projectIdFromParams({ organization_id: 'x' }, 'project_id')).toBeUndefined();
    expect(projectIdFromParams({ environment_id: '7' }, 'id')).toBeUndefined();
  });

  it('maps an environment path to its /api/projects/ twin, in both path styles', () => {
    expect(projectPathOf('/api/environments/:environment_id/events/:id')).toBe(
      '/api/projects/:project_id/events/:id',
    );
    expect(projectPathOf('/api/environments/{environment_id}/events')).toBe(
      '/api/projects/{project_id}/events',
    );
    expect(projectPathOf('/api/environments/:id/reset_token')).toBe('/api/projects/:id/reset_token');
    expect(projectPathOf('/api/environments')).toBe('/api/projects');
    expect(projectPathOf('/api/organizations/:organization_id/batch_exports')).toBe(
      '/api/organizations/:organization_id/batch_exports',
    );
    expect(projectPathOf('/api/environments_lookalike/1')).toBe('/api/environments_lookalike/1');
  });

  it('reads a rule on an environment path as naming environment_id, and leaves every other rule alone', () => {
    expect(accessRuleForPath(rule, '/api/environments/:environment_id/feature_flags')).toEqual({
      scope: 'feature_flag:read',
      projectParam: 'environment_id',
    });
    expect(accessRuleForPath(rule, '/api/projects/:project_id/feature_flags')).toBe(rule);
    const byId: AccessRule = { scope: 'project:read', projectParam: 'id' };
    expect(accessRuleForPath(byId, '/api/environments/:id')).toBe(byId);
  });

  it('documents the prefix parameter and the per-path rule of each project-scoped operation', () => {
    const operation = (extra: Record<string, unknown> = {}) => ({
      responses: {},
      'x-access': rule,
      ...extra,
    });
    const document = {
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: {
        '/api/projects/{project_id}/feature_flags': { get: operation() },
        '/api/environments/{environment_id}/feature_flags/{id}': {
          get: operation({
            parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
          }),
        },
        '/api/environments/{environment_id}/events': {
          get: operation({
            parameters: [{ name: 'environment_id', in: 'path', required: true, description: 'kept' }],
          }),
        },
        '/api/organizations/{organization_id}/batch_exports': {
          get: { responses: {}, 'x-access': { ...rule, organizationParam: 'organization_id' } },
        },
      },
    } as unknown as OpenAPIObject;

    documentProjectScopedPaths(document);

    const names = (path: string) =>
      (document.paths[path].get?.parameters ?? []).map((parameter) =>
        'name' in parameter ? parameter.name : '',
      );
    expect(names('/api/projects/{project_id}/feature_flags')).toEqual(['project_id']);
    expect(names('/api/environments/{environment_id}/feature_flags/{id}')).toEqual(['environment_id', 'id']);
    expect(document.paths['/api/environments/{environment_id}/events'].get?.parameters).toEqual([
      { name: 'environment_id', in: 'path', required: true, description: 'kept' },
    ]);
    expect(names('/api/organizations/{organization_id}/batch_exports')).toEqual([]);
    const access = (path: string) => (document.paths[path].get as { 'x-access'?: AccessRule })['x-access'];
    expect(access('/api/environments/{environment_id}/feature_flags/{id}')?.projectParam).toBe(
      'environment_id',
    );
    expect(access('/api/projects/{project_id}/feature_flags')?.projectParam).toBe('project_id');
    expect(access('/api/organizations/{organization_id}/batch_exports')?.projectParam).toBe('project_id');
  });
});
