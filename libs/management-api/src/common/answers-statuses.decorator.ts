import { SetMetadata } from '@nestjs/common';

export const ANSWERS_STATUSES = 'hogbase:answers-statuses';

/**
 * For a handler that sets its own success status among several (the Query API's 200 or 202): the
 * OpenAPI document must list exactly these, and the document test reads them from here.
 */
export const AnswersStatuses = (...statuses: number[]): MethodDecorator =>
  SetMetadata(ANSWERS_STATUSES, statuses);
