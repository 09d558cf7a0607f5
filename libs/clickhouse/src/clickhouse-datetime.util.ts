// Date keeps milliseconds only: the fraction is carried over digit by digit, so microseconds survive.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

const CLICKHOUSE_DATETIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/;

// DateTime64's range; ClickHouse clamps values outside it silently, so they are refused instead.
const MIN_YEAR = 1900;
const MAX_YEAR = 2299;

function outOfRange(value: string): RangeError {
  return new RangeError(
    `Timestamp outside ClickHouse DateTime64's range (${MIN_YEAR}-${MAX_YEAR}): ${value}`,
  );
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** No offset reads as UTC; past six digits the fraction is truncated. RangeError outside 1900–2299. */
export function toClickHouseDateTime64(value: string | Date): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new RangeError('Invalid Date');
    return toClickHouseDateTime64(value.toISOString());
  }
  const plain = fromPlainUtc(value);
  if (plain !== undefined) return plain;
  const match = ISO_8601.exec(value.trim());
  if (!match) throw new RangeError(`Not an ISO 8601 timestamp: ${JSON.stringify(value)}`);
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', offset] = match;
  const fields = [year, month, day, hour, minute, second].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const [y, mo, d, h, mi, s] = fields;
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) {
    throw new RangeError(`Not a valid date and time: ${JSON.stringify(value)}`);
  }
  // TRICKY: Date.UTC maps years 0-99 to 1900-1999, so a far-out local year is refused before it;
  // the UTC year is checked below (an offset may cross New Year).
  if (y < MIN_YEAR - 1 || y > MAX_YEAR + 1) throw outOfRange(value);
  const offsetMinutes = parseOffsetMinutes(offset, value);
  const utcMillis = Date.UTC(y, mo - 1, d, h, mi, s) - offsetMinutes * 60_000;
  const utc = new Date(utcMillis);
  const utcYear = utc.getUTCFullYear();
  if (utcYear < MIN_YEAR || utcYear > MAX_YEAR) throw outOfRange(value);
  const micros = (fraction + '000000').slice(0, 6);
  return (
    `${pad(utcYear, 4)}-${pad(utc.getUTCMonth() + 1, 2)}-${pad(utc.getUTCDate(), 2)} ` +
    `${pad(utc.getUTCHours(), 2)}:${pad(utc.getUTCMinutes(), 2)}:${pad(utc.getUTCSeconds(), 2)}.${micros}`
  );
}

export function fromClickHouseDateTime64(value: string): string {
  const match = CLICKHOUSE_DATETIME.exec(value);
  if (!match) throw new RangeError(`Not a ClickHouse DateTime value: ${JSON.stringify(value)}`);
  const [, year, month, day, hour, minute, second, fraction] = match;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}Z`;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

const ZERO = 48;
const NINE = 57;
const PLAIN_UTC_SHAPE = '0000-00-00T00:00:00.000000000';

function digitsAt(value: string, start: number, end: number): number {
  let number = 0;
  for (let index = start; index < end; index += 1) number = number * 10 + value.charCodeAt(index) - ZERO;
  return number;
}

/** The shape `Date#toISOString` writes, nearly every timestamp, without a regex or a Date; else undefined. */
function fromPlainUtc(value: string): string | undefined {
  const { length } = value;
  const plainLength = length === 20 || (length >= 22 && length <= 30);
  if (!plainLength || value.charCodeAt(length - 1) !== 90 /* Z */) return undefined;
  for (let index = 0; index < length - 1; index += 1) {
    const expected = PLAIN_UTC_SHAPE.charCodeAt(index);
    const code = value.charCodeAt(index);
    if (expected === ZERO ? code < ZERO || code > NINE : code !== expected) return undefined;
  }
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 7);
  const day = digitsAt(value, 8, 10);
  const valid =
    year >= MIN_YEAR &&
    year <= MAX_YEAR &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    digitsAt(value, 11, 13) <= 23 &&
    digitsAt(value, 14, 16) <= 59 &&
    digitsAt(value, 17, 19) <= 59;
  if (!valid) return undefined;
  const fraction = length === 20 ? '' : value.slice(20, length - 1);
  return `${value.slice(0, 10)} ${value.slice(11, 19)}.${(fraction + '000000').slice(0, 6)}`;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function parseOffsetMinutes(offset: string | undefined, value: string): number {
  if (!offset || offset === 'Z' || offset === 'z') return 0;
  const sign = offset.startsWith('-') ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
  if (hours > 23 || minutes > 59) throw new RangeError(`Invalid UTC offset in ${JSON.stringify(value)}`);
  return sign * (hours * 60 + minutes);
}
