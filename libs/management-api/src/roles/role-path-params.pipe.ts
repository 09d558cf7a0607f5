import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { IntegerIdPipe, UuidPipe } from '../common/path-params.pipe';

/**
 * Path ids of the role routes, read as the lib's pipes read them, but a malformed one is null
 * rather than a 404 thrown at once: the service then answers the unknown id's 404 in its own
 * order, after the admin check of a role write (a member's PATCH of `roles/x/` is a 403) and after
 * the flag lookup of role access (`feature_flags/abc/role_access/1/` is "Feature flag not found.").
 */
@Injectable()
export class UuidOrNullPipe implements PipeTransform<string, string | null> {
  private readonly uuid = new UuidPipe();

  transform(value: string): string | null {
    try {
      return this.uuid.transform(value);
    } catch {
      return null;
    }
  }
}

@Injectable()
export class IntegerIdOrNullPipe implements PipeTransform<string, number | null> {
  private readonly integer = new IntegerIdPipe();

  transform(value: string): number | null {
    try {
      return this.integer.transform(value);
    } catch {
      return null;
    }
  }
}

/** `@UuidOrNullParam('id') id: string | null`. */
export const UuidOrNullParam = (name: string): ParameterDecorator => Param(name, UuidOrNullPipe);

/** `@IntegerIdOrNullParam('id') id: number | null`. */
export const IntegerIdOrNullParam = (name: string): ParameterDecorator => Param(name, IntegerIdOrNullPipe);
