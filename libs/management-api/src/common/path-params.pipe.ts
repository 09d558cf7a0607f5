import { Injectable, Param, type PipeTransform } from '@nestjs/common';
import { notFound } from './api-error';
import { isUuid } from './iso.util';

/** The largest id a Postgres `integer` column holds. */
const MAX_INTEGER_ID = 2 ** 31 - 1;

/**
 * An integer id from the path. Anything else names no row, so it is the 404 an unknown id gets
 * (PostHog's integer lookups answer the same), never a 400 that would tell ids apart.
 */
@Injectable()
export class IntegerIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    if (!/^\d{1,10}$/.test(value)) throw notFound();
    const id = Number(value);
    if (id > MAX_INTEGER_ID) throw notFound();
    return id;
  }
}

/** A UUID from the path; anything else is the 404 an unknown id gets. */
@Injectable()
export class UuidPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isUuid(value)) throw notFound();
    return value;
  }
}

/** `@IntegerIdParam('id') id: number`. */
export const IntegerIdParam = (name: string): ParameterDecorator => Param(name, IntegerIdPipe);

/** `@UuidParam('id') id: string`. */
export const UuidParam = (name: string): ParameterDecorator => Param(name, UuidPipe);
