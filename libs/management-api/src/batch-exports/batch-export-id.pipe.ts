import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { isUuid } from '../common/iso.util';

/**
 * The export id of a route with a body: a malformed one is null, which the service answers with the
 * 404 of an unknown id, after the body was checked. Refused here, its 404 would race the body's 400
 * (Nest runs the pipes of all parameters at once), and an invalid body is a 400 whatever the id.
 */
@Injectable()
export class BatchExportIdPipe implements PipeTransform<string, string | null> {
  transform(value: string): string | null {
    return isUuid(value) ? value : null;
  }
}

/** `@BatchExportIdParam('id') id: string | null`. */
export const BatchExportIdParam = (name: string): ParameterDecorator => Param(name, BatchExportIdPipe);
