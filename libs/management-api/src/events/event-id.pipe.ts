import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiError } from '../common/api.error';
import { parseUuid } from '../common/path-params.pipe';

/** An event's UUID from the path; anything else is PostHog's 400 `Invalid UUID`, not a 404. */
@Injectable()
export class EventUuidPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    const uuid = parseUuid(value);
    if (uuid === null) throw new ApiError('invalid', 'Invalid UUID');
    return uuid;
  }
}
