import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';

/**
 * Operations live in `config.openapi`, not Fastify's `schema`: no validator or serializer on the hot
 * paths, nothing sent is filtered (flag payloads are free-form). Replies are typed from the operation.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    openapi?: OperationDoc;
    /** The route answers 405 to the methods no operation of its path takes. */
    refusesMethod?: boolean;
  }
}

export type JsonResponseDoc = TSchema;

/** A response by media type (scripts, text), or with headers, or without a body (no `content`). */
export interface MediaResponseDoc {
  description: string;
  /** What @fastify/swagger reads as a response without a body. */
  type?: 'null';
  content?: Record<string, { schema: TSchema }>;
  headers?: Record<string, TSchema>;
}

export type ResponseDoc = JsonResponseDoc | MediaResponseDoc;

export interface RequestBodyDoc {
  content: Record<string, { schema: TSchema }>;
}

export interface SecurityRequirement {
  readonly [scheme: string]: readonly string[];
}

/** One operation, in @fastify/swagger's route schema shape. */
export interface OperationDoc {
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  querystring?: TObject;
  params?: TObject;
  headers?: TObject;
  body?: RequestBodyDoc;
  security?: readonly SecurityRequirement[];
  deprecated?: boolean;
  response: Record<number, ResponseDoc>;
}

declare const jsonOf: unique symbol;

/** A body already serialized as JSON (cached, or built as text on a hot path), sent as it is. */
export type JsonText<T> = string & { readonly [jsonOf]: T };

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

export type RepliesOf<Doc extends OperationDoc> = {
  [Status in keyof Doc['response']]: BodyOf<Doc['response'][Status]>;
};

type ParamsOf<Doc extends OperationDoc> = Doc['params'] extends TObject ? Static<Doc['params']> : unknown;

export type DocumentedRequest<Doc extends OperationDoc> = FastifyRequest<{ Params: ParamsOf<Doc> }>;
export type DocumentedReply<Doc extends OperationDoc> = FastifyReply<{ Reply: RepliesOf<Doc> }>;

export interface DocumentedRoute<Doc extends OperationDoc> {
  method: 'GET' | 'POST' | 'OPTIONS';
  url: string;
  doc: Doc;
  /** Browsers call it cross-origin (cors.middleware.ts). */
  browser?: boolean;
  bodyLimit?: number;
  handler: (request: DocumentedRequest<Doc>, reply: DocumentedReply<Doc>) => Promise<unknown>;
}

export function documentedRoute<const Doc extends OperationDoc>(
  scope: FastifyInstance,
  route: DocumentedRoute<Doc>,
): void {
  scope.route({
    method: route.method,
    url: route.url,
    ...(route.bodyLimit === undefined ? {} : { bodyLimit: route.bodyLimit }),
    config: { openapi: route.doc, ...(route.browser ? { browser: true } : {}) },
    handler: route.handler as unknown as RouteHandlerMethod,
  });
}

/** `#/components/schemas/<$id>`, typed as what it refers to; the schema must be in CAPTURE_API_COMPONENTS. */
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

export function noContent(description: string, headers?: Record<string, TSchema>): MediaResponseDoc {
  return { type: 'null', description, ...(headers ? { headers } : {}) };
}

export function javascript(description: string, headers?: Record<string, TSchema>) {
  return {
    description,
    content: { 'application/javascript': { schema: Type.Unsafe<string | Buffer>(Type.String()) } },
    ...(headers ? { headers } : {}),
  };
}

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
