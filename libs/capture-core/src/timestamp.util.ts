/**
 * Event timestamps as `rust/common/types/src/timestamp.rs` computes them. Date keeps milliseconds
 * only, so an instant carries the microseconds apart: posthog-python's survive the skew correction.
 */

export interface PreciseInstant {
  epochMs: number;
  /** 0–999. */
  microsOfMs: number;
  /** Print six fractional digits. */
  precise: boolean;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const MAX_FUTURE_MS = 23 * HOUR_MS;
/** 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z. */
const MIN_EPOCH_MS = -62_167_219_200_000;
const END_EPOCH_MS = 253_402_300_800_000;
const EPOCH_ISO = '1970-01-01T00:00:00.000Z';
/** No timestamp format we accept is longer; a longer string is never run through a regex. */
const MAX_TIMESTAMP_LENGTH = 64;

// Bounded quantifiers on at most 64 characters: none of these can backtrack badly.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,12}))?)?)? ?(Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?$/;
const SLASH_YMD = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const SLASH_MDY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const RFC_2822 =
  /^(?:[A-Za-z]{3}, ?)?(\d{1,2}) ([A-Za-z]{3}) (\d{4}) (\d{2}):(\d{2})(?::(\d{2}))? ?(GMT|UTC?|Z|[+-]\d{4})?$/;
// Epoch numbers as dateparser reads them: 10 digits are seconds (with an optional fraction),
// 13 milliseconds, 16 microseconds, 19 nanoseconds. Anything else is not a timestamp.
const EPOCH_NUMBER = /^(?:\d{10}(?:\.\d{1,9})?|\d{13}|\d{16}|\d{19})$/;
const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};

/** The formats of `parse_event_timestamp` the README lists; null for the rest and impossible dates. */
export function parseTimestamp(value: unknown): PreciseInstant | null {
  if (typeof value === 'number') return Number.isFinite(value) ? parseTimestamp(String(value)) : null;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TIMESTAMP_LENGTH) return null;
  const fast = parseCanonicalUtc(value);
  if (fast) return fast;
  const text = value.trim();
  const first = text.charCodeAt(0);
  if (first >= 48 && first <= 57) {
    const iso = ISO_8601.exec(text);
    if (iso) return fromIsoMatch(iso);
    if (EPOCH_NUMBER.test(text)) return fromEpochText(text);
    const ymd = SLASH_YMD.exec(text);
    if (ymd) return fromCivil(ymd[1], ymd[2], ymd[3], ymd[4], ymd[5], ymd[6], undefined, 0);
    const mdy = SLASH_MDY.exec(text);
    if (mdy) return fromCivil(mdy[3], mdy[1], mdy[2], mdy[4], mdy[5], mdy[6], undefined, 0);
  }
  const rfc2822 = RFC_2822.exec(text);
  if (rfc2822) {
    const month = MONTHS[(rfc2822[2] ?? '').toLowerCase()];
    const offset = parseOffsetMinutes(rfc2822[7]);
    if (month === undefined || offset === null) return null;
    return fromCivil(rfc2822[3], month, rfc2822[1], rfc2822[4], rfc2822[5], rfc2822[6], undefined, offset);
  }
  return null;
}

export interface EventTimestampInput {
  /** Unparseable means absent. */
  timestamp: unknown;
  /** Milliseconds; only a finite JSON number counts. */
  offset: unknown;
  sentAt: PreciseInstant | null;
  ignoreSentAt: boolean;
  now: Date;
  /** `now.toISOString()`, computed once per request. */
  nowIso?: string;
}

/**
 * now + (timestamp - sent_at) unless `$ignore_sent_at`; `offset` (ms) overrides as now - offset;
 * more than 23 h ahead is now; a year outside 0–9999 is the epoch.
 */
export function computeEventTimestamp(input: EventTimestampInput): string {
  const nowMs = input.now.getTime();
  let epochMs = nowMs;
  let microsOfMs = 0;
  let precise = false;
  let fromNow = true;

  const timestamp =
    input.timestamp === undefined || input.timestamp === null ? null : parseTimestamp(input.timestamp);
  if (timestamp) {
    fromNow = false;
    precise = timestamp.precise;
    if (input.sentAt && !input.ignoreSentAt) {
      // On the two integer parts, so that nothing is lost to floating point.
      epochMs = nowMs + (timestamp.epochMs - input.sentAt.epochMs);
      microsOfMs = timestamp.microsOfMs - input.sentAt.microsOfMs;
      if (microsOfMs < 0) {
        microsOfMs += 1000;
        epochMs -= 1;
      }
    } else {
      epochMs = timestamp.epochMs;
      microsOfMs = timestamp.microsOfMs;
    }
  }
  if (typeof input.offset === 'number' && Number.isFinite(input.offset)) {
    epochMs = nowMs - Math.trunc(input.offset);
    microsOfMs = 0;
    precise = false;
    fromNow = false;
  }
  if (fromNow) return input.nowIso ?? input.now.toISOString();
  if (epochMs - nowMs > MAX_FUTURE_MS || (epochMs - nowMs === MAX_FUTURE_MS && microsOfMs > 0)) {
    return input.nowIso ?? input.now.toISOString();
  }
  if (!(epochMs >= MIN_EPOCH_MS && epochMs < END_EPOCH_MS)) return EPOCH_ISO;
  return formatInstant({ epochMs, microsOfMs, precise });
}

/** `.sssZ`, or `.ssssssZ` when precise or with microseconds. Years 0–9999 only. */
export function formatInstant(instant: PreciseInstant): string {
  // Hand-rolled: Date#toISOString is slower, and this is the capture hot path.
  const epochMs = instant.epochMs;
  const days = Math.floor(epochMs / DAY_MS);
  let msOfDay = epochMs - days * DAY_MS;
  const hours = Math.floor(msOfDay / HOUR_MS);
  msOfDay -= hours * HOUR_MS;
  const minutes = Math.floor(msOfDay / 60_000);
  msOfDay -= minutes * 60_000;
  const seconds = Math.floor(msOfDay / 1000);
  const millis = msOfDay - seconds * 1000;
  // civil_from_days (Howard Hinnant)
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const fraction =
    instant.precise || instant.microsOfMs !== 0
      ? pad(millis, 3) + pad(instant.microsOfMs, 3)
      : pad(millis, 3);
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${fraction}Z`;
}

function pad(value: number, width: number): string {
  const text = String(value);
  return text.length >= width ? text : '0000'.slice(0, width - text.length) + text;
}

/** Fast path for what SDKs nearly always send, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`. */
function parseCanonicalUtc(text: string): PreciseInstant | null {
  const length = text.length;
  if (length < 20 || text.charCodeAt(length - 1) !== 90 /* Z */) return null;
  if (
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 ||
    text.charCodeAt(16) !== 58
  ) {
    return null;
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return null;
  let fraction: string | undefined;
  if (length > 20) {
    const fractionLength = length - 21;
    if (text.charCodeAt(19) !== 46 || fractionLength < 1 || fractionLength > 12) return null;
    if (digits(text, 20, fractionLength) < 0) return null;
    fraction = text.slice(20, length - 1);
  }
  return fromCivil(year, month, day, hour, minute, second, fraction, 0);
}

function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index++) {
    const code = text.charCodeAt(index) - 48;
    if (code < 0 || code > 9) return -1;
    value = value * 10 + code;
  }
  return value;
}

/** Epoch milliseconds; a value in 2020 or earlier was really seconds (or garbage): ignored, as capture does. */
export function parseSentAtQueryParam(value: string | undefined): PreciseInstant | null {
  if (value === undefined || value.length === 0 || value.length > 20) return null;
  if (!/^\d+$/.test(value)) return null;
  const epochMs = Number(value);
  if (epochMs < EARLIEST_QUERY_SENT_AT_MS || epochMs >= END_EPOCH_MS) return null;
  return { epochMs, microsOfMs: 0, precise: false };
}

const EARLIEST_QUERY_SENT_AT_MS = 1_609_459_200_000;

function fromIsoMatch(match: RegExpExecArray): PreciseInstant | null {
  const offset = parseOffsetMinutes(match[8]);
  if (offset === null) return null;
  return fromCivil(match[1], match[2], match[3], match[4], match[5], match[6], match[7], offset);
}

function fromCivil(
  yearText: string | number | undefined,
  monthText: string | number | undefined,
  dayText: string | number | undefined,
  hourText: string | number | undefined,
  minuteText: string | number | undefined,
  secondText: string | number | undefined,
  fraction: string | undefined,
  offsetMinutes: number,
): PreciseInstant | null {
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  const hour = hourText === undefined ? 0 : Number(hourText);
  const minute = minuteText === undefined ? 0 : Number(minuteText);
  // A leap second (60) is accepted and rolls into the next minute, as chrono reads it.
  const second = secondText === undefined ? 0 : Number(secondText);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  let millis = 0;
  let micros = 0;
  if (fraction !== undefined) {
    millis = Number(fraction.slice(0, 3).padEnd(3, '0'));
    micros = fraction.length > 3 ? Number(fraction.slice(3, 6).padEnd(3, '0')) : 0;
  }
  const epochMs =
    daysFromCivil(year, month, day) * DAY_MS +
    hour * HOUR_MS +
    minute * 60_000 +
    second * 1000 +
    millis -
    offsetMinutes * 60_000;
  return { epochMs, microsOfMs: micros, precise: fraction !== undefined && fraction.length > 3 };
}

function fromEpochText(text: string): PreciseInstant {
  const dot = text.indexOf('.');
  const digits = dot === -1 ? text : text.slice(0, dot);
  if (digits.length === 10) {
    const fraction = dot === -1 ? '' : text.slice(dot + 1);
    const epochMs = Number(digits) * 1000 + Number(fraction.slice(0, 3).padEnd(3, '0'));
    const microsOfMs = fraction.length > 3 ? Number(fraction.slice(3, 6).padEnd(3, '0')) : 0;
    return { epochMs, microsOfMs, precise: fraction.length > 3 };
  }
  if (digits.length === 13) return { epochMs: Number(digits), microsOfMs: 0, precise: false };
  // 16 digits are microseconds, 19 nanoseconds: split on the text, not on a float past 2^53.
  const msDigits = digits.length - (digits.length === 16 ? 3 : 6);
  return {
    epochMs: Number(digits.slice(0, msDigits)),
    microsOfMs: Number(digits.slice(msDigits, msDigits + 3)),
    precise: true,
  };
}

/** Minutes east of UTC; null for an impossible offset. */
function parseOffsetMinutes(offset: string | undefined): number | null {
  if (offset === undefined || offset === 'Z' || offset === 'z' || offset === 'UTC' || offset === 'UT')
    return 0;
  if (offset === 'GMT') return 0;
  const sign = offset.charCodeAt(0) === 45 ? -1 : 1;
  const hours = Number(offset.slice(1, 3));
  const rest = offset.length > 3 ? offset.slice(offset.charCodeAt(3) === 58 ? 4 : 3) : '';
  const minutes = rest.length > 0 ? Number(rest) : 0;
  if (hours > 23 || minutes > 59) return null;
  return sign * (hours * 60 + minutes);
}

/** Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}
