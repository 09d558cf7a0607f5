import { applyDecorators, HttpStatus, type Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiQuery,
  ApiResponse,
  type ApiPropertyOptions,
  ApiSchema,
  DECORATORS,
  getSchemaPath,
  type ReferenceObject,
  type SchemaObject,
} from '@nestjs/swagger';
import { DEFAULT_PAGE_SIZE } from '../common/pagination.util';
import { ERROR_SCHEMA } from './openapi-completion.util';

/** Names a response class as PostHog does (`Organization`, not `OrganizationResponse`). */
export const ApiModel = (name: string, description?: string): ClassDecorator =>
  ApiSchema({ name, description });

/** A JSON object whose keys are not fixed (PostHog's free-form fields): spread into @ApiProperty. */
export const FREE_FORM_OBJECT = { type: 'object', additionalProperties: true } as const;

export const FREE_FORM_ARRAY = { type: 'array', items: {} } as const;

/** Any JSON value, null included: a combinator, since Nest would otherwise type `unknown` as `object`. */
export const ANY_JSON: ApiPropertyOptions = {
  anyOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
  ],
  nullable: true,
};

export const DATE_TIME = { type: String, format: 'date-time' } as const;

function modelName(model: Type<unknown>): string {
  const schemas = Reflect.getOwnMetadata(DECORATORS.API_SCHEMA, model) as { name?: string }[] | undefined;
  return schemas?.at(-1)?.name ?? model.name;
}

/** One class per model and envelope, so each page schema is one named component. */
const envelopes = new Map<string, Type<unknown>>();

function envelope(name: string, build: () => Type<unknown>): Type<unknown> {
  let page = envelopes.get(name);
  if (!page) {
    page = build();
    ApiSchema({ name })(page);
    envelopes.set(name, page);
  }
  return page;
}

const LINK = { type: String, format: 'uri', nullable: true } as const;

/** PostHog's LimitOffsetPagination envelope. */
export function pageOf(model: Type<unknown>): Type<unknown> {
  return envelope(`Paginated${modelName(model)}List`, () => {
    class LimitOffsetPage {
      @ApiProperty({ type: 'integer', minimum: 0, description: 'Total number of results' })
      count!: number;

      @ApiProperty({ ...LINK, description: 'The next page, or null on the last one' })
      next!: string | null;

      @ApiProperty({ ...LINK, description: 'The previous page, or null on the first one' })
      previous!: string | null;

      @ApiProperty({ type: () => model, isArray: true })
      results!: unknown[];
    }
    return LimitOffsetPage;
  });
}

/** PostHog's CursorPagination `{next, previous, results}`, or `{next, results}` (the old event list). */
export function cursorPageOf(model: Type<unknown>, { previous }: { previous: boolean }): Type<unknown> {
  const name = `${previous ? 'Cursor' : 'Next'}Paginated${modelName(model)}List`;
  return envelope(name, () => {
    class CursorPage {
      @ApiProperty({ ...LINK, description: 'The next page, or null on the last one' })
      next!: string | null;

      @ApiProperty({ type: () => model, isArray: true })
      results!: unknown[];
    }
    if (previous) {
      ApiProperty({ ...LINK, description: 'Always null: pages are followed forwards' })(
        CursorPage.prototype,
        'previous',
      );
    }
    return CursorPage;
  });
}

export function ApiPage(model: Type<unknown>, description = 'One page of results'): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'limit',
      required: false,
      type: 'integer',
      minimum: 1,
      description: `Number of results per page (${DEFAULT_PAGE_SIZE} by default; a value that is not a positive integer means the default)`,
    }),
    ApiQuery({
      name: 'offset',
      required: false,
      type: 'integer',
      minimum: 0,
      description: 'Index of the first result (0 by default)',
    }),
    ApiResponse({ status: HttpStatus.OK, description, type: pageOf(model) }),
  );
}

export function ApiCursorPage(
  model: Type<unknown>,
  {
    previous,
    description = 'One page of results',
    csv = false,
    alternatives,
  }: { previous: boolean; description?: string; csv?: boolean; alternatives?: Type<unknown>[] },
): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'cursor',
      required: false,
      type: String,
      description: "Where the page starts: copied from the previous page's `next` link",
    }),
    ApiModelResponse(cursorPageOf(model, { previous }), HttpStatus.OK, { description, csv, alternatives }),
  );
}

export interface ModelResponseOptions {
  description?: string;
  isArray?: boolean;
  /** Also answered as `text/csv` (a string of rows), when the request asks for it. */
  csv?: boolean;
  /** Other shapes the same status may have (the event list's `select` page): a `oneOf`. */
  alternatives?: Type<unknown>[];
}

export function ApiModelResponse(
  model: Type<unknown>,
  status: HttpStatus = HttpStatus.OK,
  { description, isArray = false, csv = false, alternatives = [] }: ModelResponseOptions = {},
): MethodDecorator {
  description ??= status === HttpStatus.CREATED ? 'Created' : 'OK';
  if (!csv && alternatives.length === 0) return ApiResponse({ status, description, type: model, isArray });
  const one: SchemaObject | ReferenceObject =
    alternatives.length === 0
      ? { $ref: getSchemaPath(model) }
      : { oneOf: [model, ...alternatives].map((type) => ({ $ref: getSchemaPath(type) })) };
  const json: SchemaObject | ReferenceObject = isArray ? { type: 'array', items: one } : one;
  if (!csv) {
    return applyDecorators(
      ApiExtraModels(model, ...alternatives),
      ApiResponse({ status, description, schema: json }),
    );
  }
  return applyDecorators(
    ApiExtraModels(model, ...alternatives),
    ApiResponse({
      status,
      description,
      content: { 'application/json': { schema: json }, 'text/csv': { schema: { type: 'string' } } },
    }),
  );
}

/** The answer is `model` itself or an array of it, as the request sent one or many. */
export function ApiModelOrListResponse(
  model: Type<unknown>,
  status: HttpStatus,
  description: string,
): MethodDecorator {
  const ref = { $ref: getSchemaPath(model) };
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({ status, description, schema: { oneOf: [ref, { type: 'array', items: ref }] } }),
  );
}

/** A JSON answer without a model class of its own (free-form, or produced by another library). */
export function ApiJsonResponse(
  schema: SchemaObject,
  status: HttpStatus = HttpStatus.OK,
  description = 'OK',
) {
  return ApiResponse({ status, description, schema });
}

export const ApiNoContent = (description = 'Deleted'): MethodDecorator =>
  ApiResponse({ status: HttpStatus.NO_CONTENT, description });

/** An error status the completion step cannot derive from the route, with the error body. */
export const ApiErrorResponse = (status: HttpStatus, description: string): MethodDecorator =>
  ApiResponse({ status, description, schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } });

/** A status answered with no body at all, such as the flag DELETE's 405. */
export const ApiEmptyResponse = (status: HttpStatus, description: string): MethodDecorator =>
  ApiResponse({ status, description });
