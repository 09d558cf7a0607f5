import { HttpStatus } from '@nestjs/common';
import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import type { AccessRule } from '../auth/access.decorator';
import { ERROR_TABLE, RETRY_AFTER_SECONDS } from '../common/api.error';

/** The name ErrorResponse (error-response.dto.ts) has in the document. */
export const ERROR_SCHEMA = 'Error';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

/** A write may be refused for what it asks (a member leaving as owner). */
const WRITE_METHODS = new Set<HttpMethod>(['post', 'put', 'patch', 'delete']);
/** Methods whose body is read: too large is 413, not JSON is 415. */
const BODY_METHODS = new Set<HttpMethod>(['post', 'put', 'patch']);
/** Query parameters where a bad value means the default, never a 400. */
const LENIENT_QUERY_PARAMETERS = new Set(['limit', 'offset']);

const ERROR_DESCRIPTIONS: Partial<Record<HttpStatus, string>> = {
  [HttpStatus.BAD_REQUEST]:
    'Invalid request: a field, parameter or action is refused (`attr` names the field)',
  [HttpStatus.UNAUTHORIZED]: 'No personal API key, or one that is unknown, revoked or malformed',
  [HttpStatus.FORBIDDEN]:
    'The key lacks the scope or cannot reach this organization or project, or the member may not do this',
  [HttpStatus.NOT_FOUND]: 'Not found, or in an organization the caller is not a member of (no difference)',
  [HttpStatus.PAYLOAD_TOO_LARGE]: 'The request body is too large',
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: 'The request body is not JSON',
  [HttpStatus.SERVICE_UNAVAILABLE]:
    'Postgres (or the events store) is unavailable: retry after `Retry-After` seconds',
};

const ERROR_HEADERS: Partial<Record<HttpStatus, ResponseObject['headers']>> = {
  [HttpStatus.UNAUTHORIZED]: {
    'WWW-Authenticate': {
      description: 'The scheme to authenticate with',
      schema: { type: 'string', enum: ['Bearer'] },
    },
  },
  [HttpStatus.SERVICE_UNAVAILABLE]: {
    'Retry-After': {
      description: 'Seconds to wait before trying again',
      schema: { type: 'integer', minimum: 1, example: RETRY_AFTER_SECONDS },
    },
  },
};

/** Describes the path parameters the access guard reads (Nest documents only a handler's @Param). */
const SCOPE_PARAMETER_DESCRIPTIONS = {
  organizationParam: 'The UUID of the organization, or `@current` for the key user’s current one',
  projectParam: 'The id of the project, or `@current` for the key user’s current one',
} as const;

type Operation = OperationObject & { 'x-access'?: AccessRule };

function* operations(document: OpenAPIObject): Generator<[string, HttpMethod, Operation]> {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) yield [path, method, operation];
    }
  }
}

function isReference(value: unknown): value is ReferenceObject {
  return typeof value === 'object' && value !== null && '$ref' in value;
}

const pathParameterNames = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);

/** Every `{name}` of the path is a required path parameter, and no other path parameter is. */
function documentPathParameters(path: string, operation: Operation): void {
  const names = pathParameterNames(path);
  const access = operation['x-access'];
  const parameters = (operation.parameters ?? []).filter(
    (parameter) => isReference(parameter) || parameter.in !== 'path' || names.includes(parameter.name),
  );
  for (const name of names) {
    let parameter = parameters.find(
      (candidate): candidate is ParameterObject =>
        !isReference(candidate) && candidate.in === 'path' && candidate.name === name,
    );
    if (!parameter) {
      parameter = { name, in: 'path', required: true, schema: { type: 'string' } };
      parameters.push(parameter);
    }
    parameter.required = true;
    if (name === access?.organizationParam) {
      parameter.description ??= SCOPE_PARAMETER_DESCRIPTIONS.organizationParam;
      parameter.example ??= '@current';
    } else if (name === access?.projectParam) {
      parameter.description ??= SCOPE_PARAMETER_DESCRIPTIONS.projectParam;
      parameter.example ??= '@current';
    }
  }
  const rank = (parameter: (typeof parameters)[number]) =>
    !isReference(parameter) && parameter.in === 'path' ? names.indexOf(parameter.name) : names.length;
  operation.parameters = parameters
    .map((parameter, index) => ({ parameter, index }))
    .sort((a, b) => rank(a.parameter) - rank(b.parameter) || a.index - b.index)
    .map(({ parameter }) => parameter);
}

/** The error statuses an operation can answer, from its access rule, path, method and query. */
export function errorStatusesOf(path: string, method: HttpMethod, operation: Operation): HttpStatus[] {
  const statuses = new Set<HttpStatus>([HttpStatus.SERVICE_UNAVAILABLE]);
  if (operation['x-access']?.scope !== 'public') {
    statuses.add(HttpStatus.UNAUTHORIZED).add(HttpStatus.FORBIDDEN);
  }
  if (pathParameterNames(path).length > 0) statuses.add(HttpStatus.NOT_FOUND);
  if (WRITE_METHODS.has(method)) statuses.add(HttpStatus.BAD_REQUEST);
  if (BODY_METHODS.has(method) || operation.requestBody) {
    statuses
      .add(HttpStatus.BAD_REQUEST)
      .add(HttpStatus.PAYLOAD_TOO_LARGE)
      .add(HttpStatus.UNSUPPORTED_MEDIA_TYPE);
  }
  const validatedQuery = (operation.parameters ?? []).some(
    (parameter) =>
      !isReference(parameter) && parameter.in === 'query' && !LENIENT_QUERY_PARAMETERS.has(parameter.name),
  );
  if (validatedQuery) statuses.add(HttpStatus.BAD_REQUEST);
  return [...statuses].sort((a, b) => a - b);
}

/** `Error404`: the error body narrowed to the codes and types that status carries. */
function errorSchemaFor(document: OpenAPIObject, status: HttpStatus): ReferenceObject {
  const schemas = (document.components ??= {}).schemas ?? {};
  const name = `${ERROR_SCHEMA}${status}`;
  if (!schemas[name]) {
    const base = schemas[ERROR_SCHEMA] as SchemaObject | undefined;
    if (!base?.properties) throw new Error(`the OpenAPI document lacks the ${ERROR_SCHEMA} schema`);
    const entries = Object.entries(ERROR_TABLE).filter(([, entry]) => entry.status === status);
    if (entries.length === 0) throw new Error(`no error code answers ${status} (api.error.ts)`);
    schemas[name] = {
      ...base,
      properties: {
        ...base.properties,
        code: { ...base.properties.code, enum: entries.map(([code]) => code) },
        type: { ...base.properties.type, enum: [...new Set(entries.map(([, entry]) => entry.type))] },
      },
    };
  }
  return { $ref: `#/components/schemas/${name}` };
}

function addErrorResponses(document: OpenAPIObject, path: string, method: HttpMethod, operation: Operation) {
  for (const status of errorStatusesOf(path, method, operation)) {
    if (operation.responses[status] !== undefined) continue;
    operation.responses[status] = {
      description: ERROR_DESCRIPTIONS[status] ?? HttpStatus[status],
      ...(ERROR_HEADERS[status] ? { headers: ERROR_HEADERS[status] } : {}),
      content: { 'application/json': { schema: errorSchemaFor(document, status) } },
    };
  }
}

function schemaNamesIn(value: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) schemaNamesIn(item, found);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/schemas/')) {
        found.add(child.slice('#/components/schemas/'.length));
      } else {
        schemaNamesIn(child, found);
      }
    }
  }
  return found;
}

function withReferenced(names: Set<string>, schemas: Record<string, unknown>): Set<string> {
  const pending = [...names];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    for (const referenced of schemaNamesIn(schemas[name])) {
      if (!names.has(referenced)) {
        names.add(referenced);
        pending.push(referenced);
      }
    }
  }
  return names;
}

/**
 * Response-only models get `additionalProperties: false`, so classes and answers cannot drift.
 * Request models stay open: unknown body fields are ignored, as PostHog does.
 */
function closeResponseModels(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  const answered = new Set<string>();
  const taken = new Set<string>();
  for (const [, , operation] of operations(document)) {
    schemaNamesIn(operation.responses, answered);
    schemaNamesIn(operation.requestBody, taken);
    schemaNamesIn(operation.parameters, taken);
  }
  withReferenced(answered, schemas);
  withReferenced(taken, schemas);
  for (const name of answered) {
    const schema = schemas[name] as SchemaObject | undefined;
    if (taken.has(name) || !schema?.properties || schema.additionalProperties !== undefined) continue;
    schema.additionalProperties = false;
  }
}

function successSchema(document: OpenAPIObject, operation: Operation): SchemaObject | undefined {
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
  if (!success || isReference(success)) return undefined;
  const schema = success.content?.['application/json']?.schema;
  const resolved = isReference(schema)
    ? document.components?.schemas?.[schema.$ref.split('/').pop() ?? '']
    : schema;
  return resolved && !isReference(resolved) ? resolved : undefined;
}

const ACTION_BY_METHOD: Record<Exclude<HttpMethod, 'get'>, string> = {
  post: 'create',
  put: 'update',
  patch: 'partial_update',
  delete: 'destroy',
};

/**
 * drf-spectacular's operation ids, as PostHog has them (`organizations_domains_verify_create`):
 * from the public path, not handler names, so a refactor does not rename a client method.
 */
function operationIdOf(
  document: OpenAPIObject,
  path: string,
  method: HttpMethod,
  operation: Operation,
): string {
  const words = path
    .split('/')
    .filter((segment) => segment !== '' && segment !== 'api' && !segment.startsWith('{'))
    .map((segment) => segment.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, ''))
    .filter(Boolean);
  let action: string;
  if (method !== 'get') {
    action = ACTION_BY_METHOD[method];
  } else {
    const schema = successSchema(document, operation);
    const isList =
      !path.endsWith('}') && (schema?.type === 'array' || schema?.properties?.results !== undefined);
    action = isList ? 'list' : 'retrieve';
  }
  return [...words, action].join('_');
}

/** Two ids alike: `_detail` goes on the one with more path parameters; any other clash throws. */
function assignOperationIds(document: OpenAPIObject): void {
  const byId = new Map<string, [string, Operation][]>();
  for (const [path, method, operation] of operations(document)) {
    const id = operationIdOf(document, path, method, operation);
    byId.set(id, [...(byId.get(id) ?? []), [path, operation]]);
  }
  const assigned = new Map<string, string>();
  for (const [id, group] of byId) {
    const fewest = Math.min(...group.map(([path]) => pathParameterNames(path).length));
    for (const [path, operation] of group) {
      operation.operationId = pathParameterNames(path).length > fewest ? `${id}_detail` : id;
      const clash = assigned.get(operation.operationId);
      if (clash) throw new Error(`operationId ${operation.operationId} names both ${clash} and ${path}`);
      assigned.set(operation.operationId, path);
    }
  }
}

/** Derives what the decorators leave out: path parameters, error answers, ids, closed models. */
export function completeOpenApiDocument(document: OpenAPIObject): OpenAPIObject {
  for (const [path, method, operation] of operations(document)) {
    documentPathParameters(path, operation);
    addErrorResponses(document, path, method, operation);
  }
  assignOperationIds(document);
  closeResponseModels(document);
  return document;
}
