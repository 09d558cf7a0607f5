import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export interface CheckedResponse {
  method: string;
  url: string;
  status: number;
  contentType: string | null;
  /** Undefined when not read (a streamed CSV or script is checked for status and content type only). */
  bodyText: string | undefined;
}

export interface ResponseMismatch {
  method: string;
  path: string;
  status: number;
  operation: string | undefined;
  problem: string;
  /** The first few schema errors (`/results/0/id must be integer`). */
  errors: string[];
  body?: string;
}

/** Not operations of a host's API: checked when the document describes them, skipped otherwise. */
export const NON_API_PATHS: readonly string[] = ['/_health', '/_ready', '/metrics', '/api/schema'];

const UNKNOWN_ROUTE_STATUSES = new Set([404, 405]);
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;
const MAX_ERRORS = 5;
const BODY_EXCERPT_LENGTH = 300;
const DOCUMENT_ID = 'https://openapi-response-check.invalid/document.json';

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Servers answer both spellings. */
const withoutTrailingSlash = (path: string) =>
  path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const mediaTypeOf = (contentType: string) => contentType.split(';')[0].trim().toLowerCase();

const isJsonMediaType = (mediaType: string) =>
  mediaType === 'application/json' || mediaType.endsWith('+json');

interface PathTemplate {
  template: string;
  pattern: RegExp;
  /** The more, the more specific (`/flags/my_flags` before `/flags/{id}`). */
  literalSegments: number;
  literalLength: number;
  item: JsonObject;
}

interface MatchedOperation {
  name: string;
  operation: JsonObject;
}

const SCHEMA_KEYWORDS = [
  'not',
  'additionalProperties',
  'items',
  'contains',
  'if',
  'then',
  'else',
  'propertyNames',
];
const SCHEMA_LIST_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];

/**
 * An OpenAPI schema as JSON Schema for Ajv: local `$ref`s point into the registered document; for
 * OpenAPI 3.0 `nullable: true` admits null and a boolean `exclusiveMinimum`/`exclusiveMaximum` becomes the bound.
 */
function toJsonSchema(schema: unknown, openApi30: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((entry) => toJsonSchema(entry, openApi30));
  if (!isObject(schema)) return schema;
  const converted: JsonObject = { ...schema };
  if (typeof converted.$ref === 'string' && converted.$ref.startsWith('#/')) {
    converted.$ref = `${DOCUMENT_ID}${converted.$ref}`;
  }
  for (const keyword of SCHEMA_KEYWORDS) {
    if (keyword in converted) converted[keyword] = toJsonSchema(converted[keyword], openApi30);
  }
  for (const keyword of SCHEMA_LIST_KEYWORDS) {
    if (Array.isArray(converted[keyword])) converted[keyword] = toJsonSchema(converted[keyword], openApi30);
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    const map = converted[keyword];
    if (isObject(map)) {
      converted[keyword] = Object.fromEntries(
        Object.entries(map).map(([name, entry]) => [name, toJsonSchema(entry, openApi30)]),
      );
    }
  }
  if (!openApi30) return converted;
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof converted[exclusive] === 'boolean') {
      if (converted[exclusive] && typeof converted[bound] === 'number') {
        converted[exclusive] = converted[bound];
        delete converted[bound];
      } else {
        delete converted[exclusive];
      }
    }
  }
  if ('nullable' in converted) {
    const nullable = converted.nullable === true;
    delete converted.nullable;
    if (nullable) {
      // Nest writes a nullable model as {nullable, type: 'object', allOf: [$ref]}: widening the
      // type there would still leave null to fail the allOf, so a combinator takes the anyOf below.
      const combined = ['$ref', 'allOf', 'anyOf', 'oneOf'].some((keyword) => keyword in converted);
      if (typeof converted.type === 'string' && !combined) {
        converted.type = [converted.type, 'null'];
        if (Array.isArray(converted.enum) && !converted.enum.includes(null))
          converted.enum = [...(converted.enum as unknown[]), null];
        return converted;
      }
      return { anyOf: [converted, { type: 'null' }] };
    }
  }
  return converted;
}

function describeError(error: ErrorObject): string {
  const where = error.instancePath || '(body)';
  const params = error.params as JsonObject;
  const detail =
    error.keyword === 'enum' && Array.isArray(params.allowedValues)
      ? `: ${JSON.stringify(params.allowedValues)}`
      : error.keyword === 'additionalProperties'
        ? `: ${String(params.additionalProperty)}`
        : '';
  return `${where} ${error.message ?? error.keyword}${detail}`;
}

/**
 * Checks answers against one OpenAPI 3 document: operation, documented status, JSON body schema.
 * A path or method the document lacks must answer 404 or 405, in the host's error shape when the
 * document describes one. OPTIONS is skipped unless documented; HEAD is checked as its GET, status only.
 */
export class OpenApiResponseChecker {
  private readonly templates: PathTemplate[];
  private readonly basePath: string;
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly openApi30: boolean;
  private readonly nonApiPaths: Set<string>;

  constructor(
    private readonly document: object,
    options: { nonApiPaths?: readonly string[] } = {},
  ) {
    const root = document as JsonObject;
    const version = typeof root.openapi === 'string' ? root.openapi : '';
    if (!version.startsWith('3.'))
      throw new Error(`not an OpenAPI 3 document (openapi: ${JSON.stringify(version)})`);
    this.openApi30 = version.startsWith('3.0');
    this.nonApiPaths = new Set((options.nonApiPaths ?? NON_API_PATHS).map(withoutTrailingSlash));
    const servers = Array.isArray(root.servers) ? root.servers.filter(isObject) : [];
    const serverUrl = typeof servers[0]?.url === 'string' ? servers[0].url : '/';
    this.basePath = withoutTrailingSlash(new URL(serverUrl, 'http://server.invalid').pathname).replace(
      /^\/$/,
      '',
    );
    this.templates = Object.entries(isObject(root.paths) ? root.paths : {})
      .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
      .map(([template, item]) => {
        const full = withoutTrailingSlash(`${this.basePath}${template}`);
        const segments = full.split('/').filter(Boolean);
        const literals = segments.filter((segment) => !segment.includes('{'));
        const source = full
          .split(/(\{[^}]+\})/)
          .map((part) => (part.startsWith('{') && part.endsWith('}') ? '[^/]+' : escapeRegExp(part)))
          .join('');
        return {
          template,
          pattern: new RegExp(`^${source}$`),
          literalSegments: literals.length,
          literalLength: literals.join('').length,
          item,
        };
      })
      .sort((a, b) => b.literalSegments - a.literalSegments || b.literalLength - a.literalLength);

    const AjvClass = this.openApi30 ? Ajv : Ajv2020;
    // Not strict: OpenAPI keywords (`example`, `discriminator`, `xml`) are annotations here.
    this.ajv = new AjvClass({ strict: false, allErrors: true });
    addFormats(this.ajv);
    const components = isObject(root.components) ? root.components : {};
    const schemas = isObject(components.schemas) ? components.schemas : {};
    this.ajv.addSchema({
      $id: DOCUMENT_ID,
      components: {
        schemas: Object.fromEntries(
          Object.entries(schemas).map(([name, schema]) => [name, toJsonSchema(schema, this.openApi30)]),
        ),
      },
    });
  }

  operationFor(method: string, pathname: string): MatchedOperation | undefined {
    const path = withoutTrailingSlash(pathname);
    // The most specific template is the path's resource, as the servers route (DRF's URL
    // resolution): a method it lacks is not an operation of a less specific one (`flags/{id}`).
    const candidate = this.templates.find(({ pattern }) => pattern.test(path));
    const operation = candidate?.item[method.toLowerCase()];
    return candidate && isObject(operation)
      ? { name: `${method.toUpperCase()} ${candidate.template}`, operation }
      : undefined;
  }

  check(response: CheckedResponse): ResponseMismatch | undefined {
    const url = new URL(response.url);
    const method = response.method.toUpperCase();
    const mismatch = (
      operation: string | undefined,
      problem: string,
      errors: string[] = [],
      body?: string,
    ): ResponseMismatch => ({
      method,
      path: `${url.pathname}${url.search}`,
      status: response.status,
      operation,
      problem,
      errors,
      ...(body === undefined ? {} : { body: body.slice(0, BODY_EXCERPT_LENGTH) }),
    });

    let matched = this.operationFor(method, url.pathname);
    let bodyChecked = true;
    if (!matched && method === 'HEAD') {
      matched = this.operationFor('GET', url.pathname);
      bodyChecked = false;
    }
    if (!matched) {
      if (method === 'OPTIONS') return undefined;
      if (this.nonApiPaths.has(withoutTrailingSlash(url.pathname))) return undefined;
      if (!UNKNOWN_ROUTE_STATUSES.has(response.status)) {
        return mismatch(undefined, `undocumented operation answered ${response.status}`);
      }
      const shape = this.unknownRouteShape(response.status);
      if (!shape || response.bodyText === undefined || response.bodyText === '') return undefined;
      const errors = this.validateBody(shape.key, shape.schema, response.bodyText);
      return errors
        ? mismatch(
            undefined,
            `unknown route answered ${response.status} ${errors.problem}`,
            errors.errors,
            response.bodyText,
          )
        : undefined;
    }

    const responses = isObject(matched.operation.responses) ? matched.operation.responses : {};
    const statusKey = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find(
      (key) => key in responses || key.toLowerCase() in responses,
    );
    if (!statusKey) {
      return mismatch(
        matched.name,
        `status ${response.status} is not documented (documented: ${Object.keys(responses).join(', ') || 'none'})`,
      );
    }
    const documented = this.resolve(responses[statusKey] ?? responses[statusKey.toLowerCase()]);
    if (!bodyChecked) return undefined;
    const content = isObject(documented?.content) ? documented.content : undefined;
    const hasBody = response.bodyText !== '';
    if (!content || Object.keys(content).length === 0) {
      return hasBody
        ? mismatch(
            matched.name,
            `answered a body (${response.contentType ? mediaTypeOf(response.contentType) : 'no content type'}); the document describes none for ${statusKey}`,
          )
        : undefined;
    }
    if (!hasBody)
      return mismatch(matched.name, `answered no body; the document describes one for ${statusKey}`);
    if (!response.contentType) return mismatch(matched.name, 'answered a body without a Content-Type');
    const mediaType = mediaTypeOf(response.contentType);
    const mediaKey = [mediaType, `${mediaType.split('/')[0]}/*`, '*/*'].find((key) => key in content);
    if (!mediaKey) {
      return mismatch(
        matched.name,
        `content type ${mediaType} is not documented for ${statusKey} (documented: ${Object.keys(content).join(', ')})`,
      );
    }
    const media = content[mediaKey];
    if (!isJsonMediaType(mediaType) || response.bodyText === undefined) return undefined;
    if (!isObject(media) || media.schema === undefined) return undefined;
    const errors = this.validateBody(
      `${matched.name} ${statusKey} ${mediaKey}`,
      media.schema,
      response.bodyText,
    );
    return errors
      ? mismatch(matched.name, `${statusKey} body ${errors.problem}`, errors.errors, response.bodyText)
      : undefined;
  }

  private validateBody(
    key: string,
    schema: unknown,
    bodyText: string,
  ): { problem: string; errors: string[] } | undefined {
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      return { problem: 'is not JSON', errors: [] };
    }
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema, this.openApi30) as object);
      this.validators.set(key, validate);
    }
    if (validate(body)) return undefined;
    return {
      problem: 'does not match its schema',
      errors: (validate.errors ?? []).slice(0, MAX_ERRORS).map(describeError),
    };
  }

  /** The host's error shape: the body schema the document gives `status` wherever it documents it. */
  private unknownRouteShape(status: number): { key: string; schema: unknown } | undefined {
    for (const { item } of this.templates) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!isObject(operation) || !isObject(operation.responses)) continue;
        const documented = this.resolve(operation.responses[String(status)]);
        const content = isObject(documented?.content) ? documented.content : {};
        const media = Object.entries(content).find(([mediaType]) => isJsonMediaType(mediaType))?.[1];
        if (isObject(media) && media.schema !== undefined)
          return { key: `unknown route ${status}`, schema: media.schema };
      }
    }
    return undefined;
  }

  private resolve(value: unknown): JsonObject | undefined {
    let current = value;
    for (let depth = 0; isObject(current) && typeof current.$ref === 'string' && depth < 10; depth += 1) {
      const ref: string = current.$ref;
      if (!ref.startsWith('#/')) return undefined;
      current = ref
        .slice(2)
        .split('/')
        .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
        .reduce<unknown>((node, part) => (isObject(node) ? node[part] : undefined), this.document);
    }
    return isObject(current) ? current : undefined;
  }
}
