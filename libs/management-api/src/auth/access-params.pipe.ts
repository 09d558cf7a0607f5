import { Injectable, type PipeTransform } from '@nestjs/common';
import { notFound } from '../common/api.error';
import { isUuid } from '../common/iso.util';

/**
 * The id of the project a route names, as the access guard reads it: up to 9 digits. Anything else
 * names no project: the 404 an unknown one gets, with the guard's detail.
 */
@Injectable()
export class AccessProjectIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (!/^\d{1,9}$/.test(value)) throw notFound('Project not found.');
    return Number(value);
  }
}

/** The id of the organization a route names; anything else is the 404 of an unknown one. */
@Injectable()
export class AccessOrganizationIdPipe implements PipeTransform<string, string> {
  constructor(readonly notFoundDetail = 'Not found.') {}

  transform(value: string): string {
    if (!isUuid(value)) throw notFound(this.notFoundDetail);
    return value;
  }
}
