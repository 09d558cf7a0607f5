import type { OpenAPIObject } from '@nestjs/swagger';

/** Holds the OpenAPI document built at start-up, served at /api/schema/. */
export class OpenApiDocument {
  document: OpenAPIObject | undefined;
}
