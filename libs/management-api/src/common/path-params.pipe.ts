import { Injectable, Param, type PipeTransform, type Type } from '@nestjs/common';
import { PARAMTYPES_METADATA } from '@nestjs/common/constants';
import { notFound } from './api.error';
import { isUuid } from './iso.util';

/** The largest id a Postgres `integer` column holds. */
const MAX_INTEGER_ID = 2 ** 31 - 1;

/** An integer id in Postgres's range, or null: any other text names no row. */
export function parseIntegerId(value: string): number | null {
  if (!/^\d{1,10}$/.test(value)) return null;
  const id = Number(value);
  return id > MAX_INTEGER_ID ? null : id;
}

export function parseUuid(value: string): string | null {
  return isUuid(value) ? value : null;
}

/**
 * A path id that `parse` cannot read names no row, so it is the 404 an unknown id gets (PostHog's
 * lookups answer the same), never a 400 that would tell ids apart.
 */
export abstract class PathIdPipe<T> implements PipeTransform<string, T> {
  protected abstract parse(value: string): T | null;

  transform(value: string): T {
    const id = this.parse(value);
    if (id === null) throw notFound();
    return id;
  }
}

/**
 * A path id that `parse` cannot read is passed on as null, for the routes where another answer
 * comes before the unknown id's 404, which the service then gives in its own order: the body's
 * 400 (a pipe's 404 would answer before the body is validated), or the 403 of a permission that
 * PostHog checks before the lookup.
 */
export abstract class OptionalPathIdPipe<T> implements PipeTransform<string, T | null> {
  protected abstract parse(value: string): T | null;

  transform(value: string): T | null {
    return this.parse(value);
  }
}

@Injectable()
export class IntegerIdPipe extends PathIdPipe<number> {
  protected parse(value: string): number | null {
    return parseIntegerId(value);
  }
}

@Injectable()
export class UuidPipe extends PathIdPipe<string> {
  protected parse(value: string): string | null {
    return parseUuid(value);
  }
}

@Injectable()
export class IntegerIdOrNullPipe extends OptionalPathIdPipe<number> {
  protected parse(value: string): number | null {
    return parseIntegerId(value);
  }
}

@Injectable()
export class UuidOrNullPipe extends OptionalPathIdPipe<string> {
  protected parse(value: string): string | null {
    return parseUuid(value);
  }
}

/**
 * `@Param(name, pipe)` with the parameter declared a string to Nest, whatever the pipe returns. The
 * global validation pipe converts a parameter declared `number` before the pipe reads it (`1e0`,
 * `0x1` and `+1` would all be id 1), and the OpenAPI document gives the parameter the type the path
 * holds. TypeScript records the declared types before it applies the parameter decorators.
 */
export function pathParam(name: string, pipe: Type<PipeTransform<string, unknown>>): ParameterDecorator {
  return (target, key, index) => {
    Param(name, pipe)(target, key, index);
    if (key === undefined) return;
    const types = Reflect.getMetadata(PARAMTYPES_METADATA, target, key) as unknown[] | undefined;
    if (!types) return;
    const declared = types.map((type, position) => (position === index ? String : type));
    Reflect.defineMetadata(PARAMTYPES_METADATA, declared, target, key);
  };
}

/** `@IntegerIdParam('id') id: number`. */
export const IntegerIdParam = (name: string): ParameterDecorator => pathParam(name, IntegerIdPipe);

/** `@UuidParam('id') id: string`. */
export const UuidParam = (name: string): ParameterDecorator => pathParam(name, UuidPipe);

/** `@IntegerIdOrNullParam('id') id: number | null`. */
export const IntegerIdOrNullParam = (name: string): ParameterDecorator =>
  pathParam(name, IntegerIdOrNullPipe);

/** `@UuidOrNullParam('id') id: string | null`. */
export const UuidOrNullParam = (name: string): ParameterDecorator => pathParam(name, UuidOrNullPipe);
