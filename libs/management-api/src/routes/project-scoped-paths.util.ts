import type { OpenAPIObject } from '@nestjs/swagger';
import type { AccessRule } from '../auth/access.decorator';

type OperationObject = NonNullable<OpenAPIObject['paths'][string]['get']>;

/**
 * PostHog serves project-scoped resources under `/api/projects/:project_id/` and
 * `/api/environments/:environment_id/` (newer clients such as its CLI call only the latter). A
 * project here is its own single environment, so both name the same row.
 */
export const PROJECT_PARAM = 'project_id';
export const ENVIRONMENT_PARAM = 'environment_id';

const PROJECTS_ROOT = 'api/projects';
const ENVIRONMENTS_ROOT = 'api/environments';

export const PROJECT_ROOTS = [PROJECTS_ROOT, ENVIRONMENTS_ROOT];

export function projectScoped(resource: string): string[] {
  return [
    `${PROJECTS_ROOT}/:${PROJECT_PARAM}/${resource}`,
    `${ENVIRONMENTS_ROOT}/:${ENVIRONMENT_PARAM}/${resource}`,
  ];
}

/** A rule says `project_id`; the environment twin of its path names it `environment_id`. */
export function projectIdFromParams(
  params: Record<string, string | string[] | undefined>,
  projectParam: string,
): string | string[] | undefined {
  if (params[projectParam] !== undefined) return params[projectParam];
  return projectParam === PROJECT_PARAM ? params[ENVIRONMENT_PARAM] : undefined;
}

/** The `/api/projects/` twin of an `/api/environments/` path, Express or OpenAPI style. */
export function projectPathOf(path: string): string {
  if (!/^\/api\/environments(\/|$)/.test(path)) return path;
  return path
    .replace('/api/environments', '/api/projects')
    .replace(`:${ENVIRONMENT_PARAM}`, `:${PROJECT_PARAM}`)
    .replace(`{${ENVIRONMENT_PARAM}}`, `{${PROJECT_PARAM}}`);
}

/** Keeps the route table and the published `x-access` rule true to an environment path. */
export function accessRuleForPath(rule: AccessRule, path: string): AccessRule {
  const onEnvironmentPath = path.includes(`:${ENVIRONMENT_PARAM}`) || path.includes(`{${ENVIRONMENT_PARAM}}`);
  if (!onEnvironmentPath || rule.projectParam !== PROJECT_PARAM) return rule;
  return { ...rule, projectParam: ENVIRONMENT_PARAM };
}

const ID_PARAMETER_SCHEMA = { type: 'string', pattern: '^(\\d+|@current)$' } as const;

/** Documents the prefix's parameter, which Nest omits since only the guard reads it. */
export function documentProjectScopedPaths(document: OpenAPIObject): void {
  for (const [path, item] of Object.entries(document.paths)) {
    const prefixParam = /^\/api\/(?:projects\/\{(project_id)\}|environments\/\{(environment_id)\})\//
      .exec(`${path}/`)
      ?.slice(1)
      .find(Boolean);
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (!operation) continue;
      const extended = operation as OperationObject & { 'x-access'?: AccessRule };
      if (extended['x-access']) extended['x-access'] = accessRuleForPath(extended['x-access'], path);
      if (!prefixParam) continue;
      const parameters = operation.parameters ?? [];
      const declared = parameters.some((parameter) => 'name' in parameter && parameter.name === prefixParam);
      if (declared) continue;
      operation.parameters = [
        {
          name: prefixParam,
          in: 'path',
          required: true,
          description:
            prefixParam === ENVIRONMENT_PARAM
              ? 'The id of the environment (the same as its project here), or `@current`.'
              : 'The id of the project, or `@current`.',
          schema: ID_PARAMETER_SCHEMA,
        },
        ...parameters,
      ];
    }
  }
}
