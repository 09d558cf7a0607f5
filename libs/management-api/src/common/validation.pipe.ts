import { ArgumentMetadata, Injectable, PipeTransform, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorCode } from './api.error';

const CODE_BY_CONSTRAINT: Record<string, ErrorCode> = {
  isDefined: 'required',
  isNotEmpty: 'blank',
  maxLength: 'max_length',
  minLength: 'min_length',
  isIn: 'invalid_choice',
  isEnum: 'invalid_choice',
};

/** The first failing field, depth first, with nested keys joined by `__` as drf-exceptions-hog does. */
function firstFailure(
  errors: ValidationError[],
  prefix = '',
): { attr: string; constraint: string; message: string } {
  const error = errors[0];
  const attr = prefix ? `${prefix}__${error.property}` : error.property;
  if (error.constraints) {
    // class-validator lists constraints in reverse declaration order; `isDefined` wins when present.
    const names = Object.keys(error.constraints);
    const constraint = names.includes('isDefined') ? 'isDefined' : names[names.length - 1];
    return { attr, constraint, message: error.constraints[constraint] };
  }
  return firstFailure(error.children ?? [], attr);
}

export function validationErrorFrom(errors: ValidationError[]): ApiError {
  if (errors.length === 0) return new ApiError('invalid_input', 'Invalid input.');
  const { attr, constraint, message } = firstFailure(errors);
  return new ApiError(CODE_BY_CONSTRAINT[constraint] ?? 'invalid_input', message, attr);
}

/**
 * class-validator behind PostHog's rules: unknown and read-only fields are dropped, not refused;
 * a body that is not a JSON object is a 400, as DRF answers.
 */
@Injectable()
export class ApiValidationPipe implements PipeTransform {
  private readonly inner = new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    validateCustomDecorators: false,
    exceptionFactory: validationErrorFrom,
  });

  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && isDtoClass(metadata.metatype)) {
      // No body at all reads as `{}`, as DRF does: required fields then say so one by one.
      if (value === undefined) value = {};
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new ApiError(
          'invalid_input',
          `Invalid data. Expected a dictionary, but got ${pythonTypeName(value)}.`,
        );
      }
    }
    return this.inner.transform(value, metadata);
  }
}

function isDtoClass(metatype: unknown): boolean {
  return (
    typeof metatype === 'function' && ![String, Boolean, Number, Array, Object].includes(metatype as never)
  );
}

/** DRF names the JSON value it got by its Python type. */
function pythonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'list';
  if (value === null) return 'NoneType';
  switch (typeof value) {
    case 'string':
      return 'str';
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float';
    case 'boolean':
      return 'bool';
    default:
      return typeof value;
  }
}

export class UnsupportedMediaTypeError extends Error {
  constructor(readonly mediaType: string) {
    super(`Unsupported media type "${mediaType}" in request.`);
  }
}
