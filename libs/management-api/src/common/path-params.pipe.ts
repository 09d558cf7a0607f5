import { Injectable, Param, type PipeTransform, type Type } from '@nestjs/common';
import { PARAMTYPES_METADATA } from '@nestjs/common/constants';
import { notFound } from './api.error';
import { isUuid } from './iso.util';

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

/** An unreadable path id is the 404 an unknown id gets, as in PostHog, never a 400. */
export abstract class PathIdPipe<T> implements PipeTransform<string, T> {
  protected abstract parse(value: string): T | null;

  transform(value: string): T {
    const id = this.parse(value);
    if (id === null) throw notFound();
    return id;
  }
}

/**
 * Passes an unreadable id on as null, for routes where the body's 400 or a permission's 403 must
 * come before the unknown id's 404, as in PostHog.
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
 * Declared a string to Nest whatever the pipe returns: the global validation pipe would convert a
 * `number` first (`1e0`, `0x1` and `+1` would all be id 1).
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

export const IntegerIdParam = (name: string): ParameterDecorator => pathParam(name, IntegerIdPipe);

export const UuidParam = (name: string): ParameterDecorator => pathParam(name, UuidPipe);

export const IntegerIdOrNullParam = (name: string): ParameterDecorator =>
  pathParam(name, IntegerIdOrNullPipe);

export const UuidOrNullParam = (name: string): ParameterDecorator => pathParam(name, UuidOrNullPipe);
