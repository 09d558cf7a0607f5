/** Parsed here, so that a value ClickHouse could not parse is a 400 rather than its error. */
export interface DateValue {
  /** Microseconds since the epoch, UTC. */
  epochMicros: bigint;
  /** True for a bare `YYYY-MM-DD`. */
  dateOnly: boolean;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const RELATIVE = /^-?(\d{1,6})([hdwmqyMs])$/;

/** ClickHouse's DateTime64 range. */
const MIN_YEAR = 1900;
const MAX_YEAR = 2299;

const MICROS_PER_MILLI = 1000n;
const MICROS_PER_SECOND = 1_000_000n;
const MICROS_PER_DAY = 86_400n * MICROS_PER_SECOND;

/** No offset means UTC. */
export function parseAbsoluteDate(text: string): DateValue | undefined {
  const trimmed = text.trim();
  const dateOnly = DATE_ONLY.exec(trimmed);
  if (dateOnly) {
    const millis = utcMillis(Number(dateOnly[1]), Number(dateOnly[2]), Number(dateOnly[3]), 0, 0, 0);
    if (millis === undefined) return undefined;
    return { epochMicros: BigInt(millis) * MICROS_PER_MILLI, dateOnly: true };
  }
  const dateTime = DATE_TIME.exec(trimmed);
  if (!dateTime) return undefined;
  const [, year, month, day, hour, minute, second, fraction, zone] = dateTime;
  const millis = utcMillis(
    Number(year),
    Number(month),
    Number(day),
    Number(hour),
    Number(minute),
    Number(second ?? '0'),
  );
  if (millis === undefined) return undefined;
  const offsetMinutes = parseOffset(zone);
  if (offsetMinutes === undefined) return undefined;
  const micros = BigInt((fraction ?? '').padEnd(6, '0').slice(0, 6) || '0');
  const epochMicros = (BigInt(millis) - BigInt(offsetMinutes) * 60_000n) * MICROS_PER_MILLI + micros;
  if (!inRange(epochMicros)) return undefined;
  return { epochMicros, dateOnly: false };
}

/** What PostHog's `is_date_*` filters accept: also `-7d`, `-3m` (months), `-30M` (minutes), … back from `now`. */
export function parseFilterDate(text: string, now: Date): DateValue | undefined {
  const absolute = parseAbsoluteDate(text);
  if (absolute) return absolute;
  const relative = RELATIVE.exec(text.trim());
  if (!relative) return undefined;
  const amount = Number(relative[1]);
  const unit = relative[2];
  const date = new Date(now.getTime());
  switch (unit) {
    case 's':
      date.setUTCSeconds(date.getUTCSeconds() - amount);
      break;
    case 'M':
      date.setUTCMinutes(date.getUTCMinutes() - amount);
      break;
    case 'h':
      date.setUTCHours(date.getUTCHours() - amount);
      break;
    case 'd':
      date.setUTCDate(date.getUTCDate() - amount);
      break;
    case 'w':
      date.setUTCDate(date.getUTCDate() - amount * 7);
      break;
    case 'm':
      date.setUTCMonth(date.getUTCMonth() - amount);
      break;
    case 'q':
      date.setUTCMonth(date.getUTCMonth() - amount * 3);
      break;
    default:
      date.setUTCFullYear(date.getUTCFullYear() - amount);
  }
  const epochMicros = BigInt(date.getTime()) * MICROS_PER_MILLI;
  if (Number.isNaN(date.getTime()) || !inRange(epochMicros)) return undefined;
  return { epochMicros, dateOnly: false };
}

export function addMicros(value: DateValue, micros: bigint): DateValue {
  return { epochMicros: value.epochMicros + micros, dateOnly: false };
}

export const ONE_DAY_MICROS = MICROS_PER_DAY;
export const ONE_SECOND_MICROS = MICROS_PER_SECOND;

/** `YYYY-MM-DD hh:mm:ss.ffffff`, UTC: the text `toDateTime64(…, 6, 'UTC')` reads. */
export function formatClickHouseDateTime(value: DateValue): string {
  const micros = value.epochMicros;
  const millis = micros / MICROS_PER_MILLI - (micros % MICROS_PER_MILLI < 0n ? 1n : 0n);
  const date = new Date(Number(millis));
  const pad = (number: number, width = 2): string => String(number).padStart(width, '0');
  const fraction = ((micros % MICROS_PER_SECOND) + MICROS_PER_SECOND) % MICROS_PER_SECOND;
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.` +
    `${fraction.toString().padStart(6, '0')}`
  );
}

export function formatClickHouseDate(value: DateValue): string {
  return formatClickHouseDateTime(value).slice(0, 10);
}

function utcMillis(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  if (year < MIN_YEAR || year > MAX_YEAR) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const millis = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(millis);
  // Date.UTC rolls 2023-02-30 over to March; a real calendar date round-trips.
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  return millis;
}

function parseOffset(zone: string | undefined): number | undefined {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const match = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!match) return undefined;
  const hours = Number(match[2]);
  const minutes = Number(match[3] ?? '0');
  if (hours > 14 || minutes > 59) return undefined;
  const total = hours * 60 + minutes;
  return match[1] === '-' ? -total : total;
}

const MIN_MICROS = BigInt(Date.UTC(MIN_YEAR, 0, 1)) * MICROS_PER_MILLI;
const MAX_MICROS = BigInt(Date.UTC(MAX_YEAR + 1, 0, 1)) * MICROS_PER_MILLI - 1n;

function inRange(epochMicros: bigint): boolean {
  return epochMicros >= MIN_MICROS && epochMicros <= MAX_MICROS;
}
