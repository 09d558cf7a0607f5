import { createParamDecorator, type ExecutionContext, type HttpStatus } from '@nestjs/common';
import type { Response } from 'express';

/** Sets the success status of this answer, for a handler that answers one of several. */
export type SetResponseStatus = (status: HttpStatus) => void;

/**
 * `@ResponseStatus() setStatus: SetResponseStatus`: the status the answer goes out with, chosen by
 * the handler (the Query API's 200 or 202), without the handler taking the response itself.
 */
export const ResponseStatus = createParamDecorator(
  (_data: unknown, context: ExecutionContext): SetResponseStatus =>
    (status) => {
      context.switchToHttp().getResponse<Response>().status(status);
    },
);
