import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { publicRequestUrl } from './public-url.util';

/** `@RequestUrl() url: URL`: the request's URL on the public origin, for a page's links. */
export const RequestUrl = createParamDecorator((_data: unknown, context: ExecutionContext): URL =>
  publicRequestUrl(context.switchToHttp().getRequest<Request>()),
);
