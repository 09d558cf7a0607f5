import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { formatOf, type ResponseFormat } from './event-list-request.util';

/**
 * `@ResponseFormatParam() format`: `?format=`, or without one the Accept header. Read as the
 * handler's arguments are extracted, so a bad format is the answer before any other parameter's.
 */
export const ResponseFormatParam = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ResponseFormat => {
    const request = context.switchToHttp().getRequest<Request>();
    return formatOf(request.query.format, request.headers.accept);
  },
);
