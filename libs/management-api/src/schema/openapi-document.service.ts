import type { OpenAPIObject, SwaggerDocumentOptions } from '@nestjs/swagger';
import { ErrorResponse } from './error-response.dto';

/** Holds the OpenAPI document built at start-up, served at /api/schema/. */
export class OpenApiDocument {
  document: OpenAPIObject | undefined;
}

/** The models no handler names but every error answer uses. */
export const OPENAPI_DOCUMENT_OPTIONS: SwaggerDocumentOptions = { extraModels: [ErrorResponse] };
