import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { isUuid } from '../common/iso.util';

/**
 * A domain's id on a route with a body: a malformed one reaches the service as null, which answers
 * the 404. Nest runs the parameters' pipes together, so a pipe refusing the path would answer
 * before the body's validation does, and an invalid body is a 400 whatever the path names.
 */
@Injectable()
export class DomainIdOrNullPipe implements PipeTransform<string, string | null> {
  transform(value: string): string | null {
    return isUuid(value) ? value : null;
  }
}

/** `@DomainIdOrNullParam('id') id: string | null`, beside a `@Body()`. */
export const DomainIdOrNullParam = (name: string): ParameterDecorator => Param(name, DomainIdOrNullPipe);
