import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { formatOf, type ResponseFormat } from './event-list-request.util';

/** `?format=` or the Accept header; read with the arguments, so a bad format is answered first. */
export const ResponseFormatParam = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ResponseFormat => {
    const request = context.switchToHttp().getRequest<Request>();
    return formatOf(request.query.format, request.headers.accept);
  },
);
