import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';

/**
 * How a route of the capture host documents itself. The operation is kept in the route's `config`
 * (`config.openapi`), never in Fastify's `schema`: Fastify then compiles no validator and no
 * serializer, so the hot paths (`/batch/`, `/e/`, `/flags`) cost the same per request as before,
 * and nothing a handler sends is filtered through a schema (flag payloads are free-form JSON).
 * The document (capture-openapi.plugin.ts) is built from these objects by @fastify/swagger, and
 * each handler's `reply` is typed from the same objects (RepliesOf), so a handler cannot send a
 * body or status its operation does not declare.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's OpenAPI operation (documented-route.util.ts). */
    openapi?: OperationDoc;
    /** The route answers 405 to the methods no operation of its path takes (capture-openapi.plugin.ts). */
    refusesMethod?: boolean;
  }
}

/** A JSON response: the schema of its body; its `description` says when it is answered. */
export type JsonResponseDoc = TSchema;

/** A response described by media type (scripts, text), or one with headers, or without a body. */
export interface MediaResponseDoc {
  description: string;
  /** `null` for a response without a body (what @fastify/swagger reads as such). */
  type?: 'null';
  /** No `content`: the response has no body (204, 304). */
  content?: Record<string, { schema: TSchema }>;
  headers?: Record<string, TSchema>;
}

export type ResponseDoc = JsonResponseDoc | MediaResponseDoc;

/** A request body, by media type. */
export interface RequestBodyDoc {
  content: Record<string, { schema: TSchema }>;
}

export interface SecurityRequirement {
  readonly [scheme: string]: readonly string[];
}

/** One operation, in @fastify/swagger's route schema shape (what it turns into the document). */
export interface OperationDoc {
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  querystring?: TObject;
  params?: TObject;
  headers?: TObject;
  body?: RequestBodyDoc;
  /** Alternatives, each naming security schemes (`{}`: none needed). */
  security?: readonly SecurityRequirement[];
  deprecated?: boolean;
  response: Record<number, ResponseDoc>;
}

declare const jsonOf: unique symbol;

/**
 * A body already serialized as JSON (built once and cached, or built as text on a hot path):
 * sent as it is, with the JSON content type set by the handler. The brand keeps what it holds.
 */
export type JsonText<T> = string & { readonly [jsonOf]: T };

/** `JSON.stringify(value)`, remembering what it holds. */
export function jsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value) as JsonText<T>;
}

// NOTE: no body is `void`, not `undefined`: Fastify reads an `undefined` reply type as "anything".
type BodyOf<Response> = Response extends MediaResponseDoc
  ? Response['content'] extends Record<string, { schema: infer Schema extends TSchema }>
    ? Static<Schema>
    : void
  : Response extends TSchema
    ? Static<Response> | JsonText<Static<Response>>
    : never;

/** What a handler may send, by status: the bodies its operation documents. */
export type RepliesOf<Doc extends OperationDoc> = {
  [Status in keyof Doc['response']]: BodyOf<Doc['response'][Status]>;
};

type ParamsOf<Doc extends OperationDoc> = Doc['params'] extends TObject ? Static<Doc['params']> : unknown;

export type DocumentedRequest<Doc extends OperationDoc> = FastifyRequest<{ Params: ParamsOf<Doc> }>;
export type DocumentedReply<Doc extends OperationDoc> = FastifyReply<{ Reply: RepliesOf<Doc> }>;

export interface DocumentedRoute<Doc extends OperationDoc> {
  method: 'GET' | 'POST' | 'OPTIONS';
  /** As the SDKs call it; a trailing slash is optional when requested (`ignoreTrailingSlash`). */
  url: string;
  doc: Doc;
  /** Browsers call it cross-origin (cors.ts). */
  browser?: boolean;
  bodyLimit?: number;
  handler: (request: DocumentedRequest<Doc>, reply: DocumentedReply<Doc>) => Promise<unknown>;
}

/** Registers a route with its operation; see the top of this file. */
export function documentedRoute<const Doc extends OperationDoc>(
  scope: FastifyInstance,
  route: DocumentedRoute<Doc>,
): void {
  scope.route({
    method: route.method,
    url: route.url,
    ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
    config: { openapi: route.doc, ...(route.browser ? { browser: true } : {}) },
    // The typed reply is Fastify's own reply: only its status-to-body typing is narrower.
    handler: route.handler as unknown as RouteHandlerMethod,
  });
}

/**
 * A reference to a named schema of the document (`#/components/schemas/<$id>`), typed as what it
 * refers to; `description` says when the response is answered. The schema must be one of the
 * document's components (CAPTURE_API_COMPONENTS).
 */
export function ref<Schema extends TSchema>(schema: Schema, description?: string) {
  if (!schema.$id)
    throw new Error('only a schema with an $id (a component of the document) can be referred to');
  return Type.Unsafe<Static<Schema>>(Type.Ref(schema.$id, description ? { description } : {}));
}

/** A string schema limited to `values`, as OpenAPI 3.0 writes it (`enum`, not a union of consts). */
export function stringEnum<const Values extends readonly string[]>(
  values: Values,
  options: { description?: string } = {},
) {
  return Type.Unsafe<Values[number]>({ type: 'string', enum: [...values], ...options });
}

/** A response without a body. */
export function noContent(description: string, headers?: Record<string, TSchema>): MediaResponseDoc {
  return { type: 'null', description, ...(headers ? { headers } : {}) };
}

/** A script (`application/javascript`), as a string or the bytes read from disk. */
export function javascript(description: string, headers?: Record<string, TSchema>) {
  return {
    description,
    content: { 'application/javascript': { schema: Type.Unsafe<string | Buffer>(Type.String()) } },
    ...(headers ? { headers } : {}),
  };
}

/** A JSON response with headers. */
export function jsonWithHeaders<Schema extends TSchema>(
  description: string,
  schema: Schema,
  headers: Record<string, TSchema>,
) {
  return {
    description,
    content: {
      'application/json': { schema: Type.Unsafe<Static<Schema> | JsonText<Static<Schema>>>(schema) },
    },
    headers,
  };
}
