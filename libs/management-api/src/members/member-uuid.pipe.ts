import { Injectable } from '@nestjs/common';
import { OptionalPathIdPipe, parseUuid, PathIdPipe, pathParam } from '../common/path-params.pipe';

/** PostHog's alias for the caller's own user in a member's path (`members/@me/`). */
export const CURRENT_USER_ALIAS = '@me';

const parseMemberUuid = (value: string): string | null =>
  value === CURRENT_USER_ALIAS ? value : parseUuid(value);

/** A member's user UUID, or `@me`; anything else is the 404 an unknown member gets. */
@Injectable()
export class MemberUuidPipe extends PathIdPipe<string> {
  protected parse(value: string): string | null {
    return parseMemberUuid(value);
  }
}

/** The same on a route with a body: a malformed UUID reaches the service as null. */
@Injectable()
export class MemberUuidOrNullPipe extends OptionalPathIdPipe<string> {
  protected parse(value: string): string | null {
    return parseMemberUuid(value);
  }
}

export const MemberUuidParam = (name: string): ParameterDecorator => pathParam(name, MemberUuidPipe);

export const MemberUuidOrNullParam = (name: string): ParameterDecorator =>
  pathParam(name, MemberUuidOrNullPipe);
