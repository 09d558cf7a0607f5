import { parseRustFloat } from './json-repr.util';

/** `is_date_*` as PostHog's flags service reads dates; instants are epoch nanoseconds, its precision. */

const NANOS_PER_MILLI = 1_000_000n;
const NANOS_PER_SECOND = 1_000_000_000n;
const MILLIS_PER_HOUR = 3_600_000;
const MILLIS_PER_DAY = 86_400_000;

/** chrono's representable range, in seconds. */
const MIN_SECONDS = -8_334_601_228_800;
const MAX_SECONDS = 8_210_298_412_799;

const RELATIVE_DATE = /^-?([0-9]+)([hdwmy])$/;
const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;
const DATE_ONLY = /^([+-]?\d{4,})-(\d{1,2})-(\d{1,2})$/;
const NAIVE_DATE_TIME =
  /^([+-]?\d{4,})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?$/;
const EXPLICIT_ZONE = /(?:[zZ]|UTC|GMT|[+-]\d{2}:?\d{2})$/;

export interface DateMatchingOptions {
  timezone: string;
  now: Date;
}

/** The person-side value: a string in the project's timezone or a float timestamp, else none. */
export function parsePropertyDate(value: unknown, options: DateMatchingOptions): bigint | undefined {
  if (typeof value === 'string') {
    const seconds = parseRustFloat(value);
    if (seconds !== undefined) return fromFloatTimestamp(seconds);
    return parseDateString(value, options);
  }
  if (typeof value === 'number') return fromFloatTimestamp(value);
  return undefined;
}

/**
 * Relative (under 10000 units), RFC 3339 with an offset, `YYYY-MM-DD[[T ]hh:mm[:ss[.f]]]` in the
 * project's timezone, else any date text JavaScript can read (naive ones as UTC).
 */
export function parseDateString(text: string, options: DateMatchingOptions): bigint | undefined {
  const relative = parseRelativeDate(text, options);
  if (relative !== undefined) return relative;

  const rfc3339 = RFC_3339.exec(text);
  if (rfc3339) {
    const [, year, month, day, hour, minute, second, fraction, zone] = rfc3339;
    const naive = naiveMillis(+year, +month, +day, +hour, +minute, +second);
    if (naive === undefined) return undefined;
    const offsetMinutes =
      zone.toUpperCase() === 'Z'
        ? 0
        : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
    return toNanos(naive - offsetMinutes * 60_000, fraction);
  }

  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly) {
    const naive = naiveMillis(+dateOnly[1], +dateOnly[2], +dateOnly[3], 0, 0, 0);
    return naive === undefined ? undefined : zonedToInstant(naive, 0n, options.timezone);
  }
  const naiveDateTime = NAIVE_DATE_TIME.exec(text);
  if (naiveDateTime) {
    const [, year, month, day, hour, minute, second, fraction] = naiveDateTime;
    const naive = naiveMillis(+year, +month, +day, +hour, +minute, second === undefined ? 0 : +second);
    if (naive === undefined) return undefined;
    return zonedToInstant(naive, fractionNanos(fraction), options.timezone);
  }

  // NOTE: PostHog falls back to the `dateparser` crate, which reads many more layouts (RFC 2822,
  // "May 02, 2021 15:51:31"); Date.parse covers the common ones, naive text taken as UTC as there.
  const millis = Date.parse(EXPLICIT_ZONE.test(text) ? text : `${text} UTC`);
  return Number.isNaN(millis) ? undefined : BigInt(millis) * NANOS_PER_MILLI;
}

/**
 * `-7d`, `3h`, `2w`, `1m`, `1y` (any sign: always back in time) on the project's wall clock; months
 * and years clamp the day one step at a time, like relativedelta as PostHog applies it.
 */
export function parseRelativeDate(text: string, options: DateMatchingOptions): bigint | undefined {
  const match = RELATIVE_DATE.exec(text);
  if (!match) return undefined;
  const amount = Number(match[1]);
  if (amount >= 10_000) return undefined;
  const nowMillis = options.now.getTime();
  const wallClock = nowMillis + timezoneOffsetMillis(nowMillis, options.timezone);
  let result: number;
  switch (match[2]) {
    case 'h':
      result = wallClock - amount * MILLIS_PER_HOUR;
      break;
    case 'd':
      result = wallClock - amount * MILLIS_PER_DAY;
      break;
    case 'w':
      result = wallClock - amount * 7 * MILLIS_PER_DAY;
      break;
    case 'm':
      result = subtractMonths(wallClock, amount);
      break;
    default:
      result = subtractYears(wallClock, amount);
  }
  return zonedToInstant(result, 0n, options.timezone);
}

function subtractMonths(wallClock: number, months: number): number {
  const date = new Date(wallClock);
  let year = date.getUTCFullYear();
  let month = date.getUTCMonth();
  let day = date.getUTCDate();
  for (let step = 0; step < months; step++) {
    if (month === 0) {
      year -= 1;
      month = 11;
    } else {
      month -= 1;
    }
    day = Math.min(day, daysInMonth(year, month));
  }
  return withDate(date, year, month, day);
}

function subtractYears(wallClock: number, years: number): number {
  const date = new Date(wallClock);
  let year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  let day = date.getUTCDate();
  for (let step = 0; step < years; step++) {
    year -= 1;
    if (month === 1) day = Math.min(day, daysInMonth(year, month));
  }
  return withDate(date, year, month, day);
}

function withDate(time: Date, year: number, month: number, day: number): number {
  const result = new Date(time.getTime());
  result.setUTCFullYear(year, month, day);
  return result.getTime();
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * Unix seconds as the flags service reads them: floored, the fraction rounded to nanoseconds (Rust's
 * casts: a negative fraction saturates to 0, NaN is the epoch); out of chrono's range is no date.
 */
export function fromFloatTimestamp(seconds: number): bigint | undefined {
  if (Number.isNaN(seconds)) return 0n;
  const whole = Math.floor(seconds);
  if (whole < MIN_SECONDS || whole > MAX_SECONDS) return undefined;
  let nanos = Math.round((seconds % 1) * 1_000_000_000);
  if (nanos < 0) nanos = 0;
  return BigInt(whole) * NANOS_PER_SECOND + BigInt(nanos);
}

/** Milliseconds of a wall-clock time as if it were UTC; undefined for an impossible date. */
function naiveMillis(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): number | undefined {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month - 1)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

function fractionNanos(fraction: string | undefined): bigint {
  if (!fraction) return 0n;
  return BigInt(fraction.slice(0, 9).padEnd(9, '0'));
}

function toNanos(millis: number, fraction: string | undefined): bigint {
  return BigInt(millis) * NANOS_PER_MILLI + fractionNanos(fraction);
}

/** As chrono's `from_local_datetime` in PostHog: an overlap takes the earlier instant, a gap has none. */
export function zonedToInstant(
  wallClockMillis: number,
  subMilliNanos: bigint,
  timezone: string,
): bigint | undefined {
  if (isUtc(timezone)) return BigInt(wallClockMillis) * NANOS_PER_MILLI + subMilliNanos;
  const candidates = new Set(
    [-MILLIS_PER_DAY, 0, MILLIS_PER_DAY].map((shift) =>
      timezoneOffsetMillis(wallClockMillis + shift, timezone),
    ),
  );
  let earliest: number | undefined;
  for (const offset of candidates) {
    const instant = wallClockMillis - offset;
    if (
      timezoneOffsetMillis(instant, timezone) === offset &&
      (earliest === undefined || instant < earliest)
    ) {
      earliest = instant;
    }
  }
  return earliest === undefined ? undefined : BigInt(earliest) * NANOS_PER_MILLI + subMilliNanos;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

export function timezoneOffsetMillis(instantMillis: number, timezone: string): number {
  if (isUtc(timezone)) return 0;
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    formatters.set(timezone, formatter);
  }
  const wholeSecond = Math.floor(instantMillis / 1000) * 1000;
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(new Date(wholeSecond))) parts[part.type] = part.value;
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - Number(parts.year) : Number(parts.year);
  const wallClock = new Date(0);
  wallClock.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day));
  wallClock.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), 0);
  return wallClock.getTime() - wholeSecond;
}

function isUtc(timezone: string): boolean {
  return timezone === 'UTC' || timezone === 'Etc/UTC' || timezone === 'GMT';
}
