import { Transform } from 'class-transformer';
import { ApiError } from './api.error';

// NOTE: these run in class-transformer, before class-validator: a thrown ApiError reaches the
// error filter as it is. That is how a `null` gets DRF's own code (`null`), which no
// class-validator constraint maps to. Values they do not recognise pass through unchanged for
// the validators to refuse with DRF's messages.

const nullRefused = (key: string) => new ApiError('null', 'This field may not be null.', key);

/** DRF refuses `null` for a field without `allow_null`: 400 `This field may not be null.` */
export function RejectNull(): PropertyDecorator {
  return Transform(({ value, key }: { value: unknown; key: string }) => {
    if (value === null) throw nullRefused(key);
    return value;
  });
}

/** DRF's CharField: refuses `null`, reads a number as its text, trims surrounding whitespace (so `"  "` is blank). */
export function DrfCharField(): PropertyDecorator {
  return Transform(({ value, key }: { value: unknown; key: string }) => {
    if (value === null) throw nullRefused(key);
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    return typeof value === 'string' ? value.trim() : value;
  });
}

const TRUE_VALUES = new Set<unknown>([
  't',
  'T',
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'true',
  'True',
  'TRUE',
  'on',
  'On',
  'ON',
  '1',
  1,
  true,
]);
const FALSE_VALUES = new Set<unknown>([
  'f',
  'F',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'false',
  'False',
  'FALSE',
  'off',
  'Off',
  'OFF',
  '0',
  0,
  false,
]);
const NULL_VALUES = new Set<unknown>(['null', 'Null', 'NULL', '']);

/** DRF's BooleanField: `"true"`, `"yes"`, `1`… are true, their opposites false; `null` only when allowed. */
export function DrfBooleanField({ allowNull = false }: { allowNull?: boolean } = {}): PropertyDecorator {
  return Transform(({ value, key }: { value: unknown; key: string }) => {
    if (value === null) {
      if (allowNull) return null;
      throw nullRefused(key);
    }
    if (TRUE_VALUES.has(value)) return true;
    if (FALSE_VALUES.has(value)) return false;
    if (allowNull && NULL_VALUES.has(value)) return null;
    return value;
  });
}
