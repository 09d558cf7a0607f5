import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { notFound } from '../common/api-error';
import { isUuid } from '../common/iso.util';

/** PostHog's alias for the caller's own user in a member's path (`members/@me/`). */
export const CURRENT_USER_ALIAS = '@me';

const isMemberUuid = (value: string) => value === CURRENT_USER_ALIAS || isUuid(value);

/** A member's user UUID, or `@me`; anything else is the 404 an unknown member gets. */
@Injectable()
export class MemberUuidPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isMemberUuid(value)) throw notFound();
    return value;
  }
}

/**
 * On a route with a body: a malformed UUID reaches the service as null, which answers the 404.
 * Nest runs the parameters' pipes together, so a pipe refusing the path would answer before the
 * body's validation does, and an invalid body is a 400 whatever the path names.
 */
@Injectable()
export class MemberUuidOrNullPipe implements PipeTransform<string, string | null> {
  transform(value: string): string | null {
    return isMemberUuid(value) ? value : null;
  }
}

/** `@MemberUuidParam('user__uuid') userUuid: string`. */
export const MemberUuidParam = (name: string): ParameterDecorator => Param(name, MemberUuidPipe);

/** `@MemberUuidOrNullParam('user__uuid') userUuid: string | null`, beside a `@Body()`. */
export const MemberUuidOrNullParam = (name: string): ParameterDecorator => Param(name, MemberUuidOrNullPipe);
