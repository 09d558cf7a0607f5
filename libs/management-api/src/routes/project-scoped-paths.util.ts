import type { OpenAPIObject } from '@nestjs/swagger';
import type { AccessRule } from '../auth/access.decorator';

type OperationObject = NonNullable<OpenAPIObject['paths'][string]['get']>;

/**
 * PostHog serves every project-scoped resource under two prefixes: `/api/projects/:project_id/`
 * and `/api/environments/:environment_id/` (the team viewset, which newer clients such as
 * PostHog's CLI call exclusively). A project here is its own single environment, so both prefixes
 * name the same row. Every project-scoped controller takes its paths from this file, and the
 * environments e2e spec fails on a `/api/projects/` route without its `/api/environments/` twin.
 */
export const PROJECT_PARAM = 'project_id';
/** PostHog's own name for the id under `/api/environments/` (its generated OpenAPI document). */
export const ENVIRONMENT_PARAM = 'environment_id';

const PROJECTS_ROOT = 'api/projects';
const ENVIRONMENTS_ROOT = 'api/environments';

/** The project collection itself (`/api/projects/:id`) and the same rows as environments. */
export const PROJECT_ROOTS = [PROJECTS_ROOT, ENVIRONMENTS_ROOT];

/** `projectScoped('feature_flags')`: the resource under a project and under its environment. */
export function projectScoped(resource: string): string[] {
  return [
    `${PROJECTS_ROOT}/:${PROJECT_PARAM}/${resource}`,
    `${ENVIRONMENTS_ROOT}/:${ENVIRONMENT_PARAM}/${resource}`,
  ];
}

/**
 * The project a request names, whichever prefix it came by: a rule says `project_id`, and the
 * environment twin of its path names the same project `environment_id`.
 */
export function projectIdFromParams(
  params: Record<string, string | string[] | undefined>,
  projectParam: string,
): string | string[] | undefined {
  if (params[projectParam] !== undefined) return params[projectParam];
  return projectParam === PROJECT_PARAM ? params[ENVIRONMENT_PARAM] : undefined;
}

/**
 * The `/api/projects/` path an `/api/environments/` path is the twin of (any other path as it is),
 * in Express style (`:name`) or OpenAPI style (`{name}`).
 */
export function projectPathOf(path: string): string {
  if (!/^\/api\/environments(\/|$)/.test(path)) return path;
  return path
    .replace('/api/environments', '/api/projects')
    .replace(`:${ENVIRONMENT_PARAM}`, `:${PROJECT_PARAM}`)
    .replace(`{${ENVIRONMENT_PARAM}}`, `{${PROJECT_PARAM}}`);
}

/**
 * A route's access rule as it reads on one of its paths: under `/api/environments/` the project
 * comes from `environment_id`. The guard resolves either name (projectIdFromParams); this keeps
 * the route table and the published `x-access` rule true to each path.
 */
export function accessRuleForPath(rule: AccessRule, path: string): AccessRule {
  const onEnvironmentPath = path.includes(`:${ENVIRONMENT_PARAM}`) || path.includes(`{${ENVIRONMENT_PARAM}}`);
  if (!onEnvironmentPath || rule.projectParam !== PROJECT_PARAM) return rule;
  return { ...rule, projectParam: ENVIRONMENT_PARAM };
}

const ID_PARAMETER_SCHEMA = { type: 'string', pattern: '^(\\d+|@current)$' } as const;

/**
 * Documents the project prefix of each project-scoped path in the OpenAPI document: the path
 * parameter naming the project or environment (Nest documents only the `@Param`s a handler
 * reads, and the guard reads this one), and the access rule as it applies on that path.
 */
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
