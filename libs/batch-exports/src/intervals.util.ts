/** Aligned in the project's time zone; daylight-saving days are 23 or 25 hours long (README.md). */
export const BATCH_EXPORT_INTERVALS = ['hour', 'day', 'week', 'every 5 minutes'] as const;
export type BatchExportInterval = (typeof BATCH_EXPORT_INTERVALS)[number];

export interface DataInterval {
  start: Date;
  end: Date;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** PostHog's `interval_time_delta`. */
export function intervalDuration(interval: BatchExportInterval): number {
  switch (interval) {
    case 'every 5 minutes':
      return 5 * MINUTE;
    case 'hour':
      return HOUR;
    case 'day':
      return DAY;
    case 'week':
      return 7 * DAY;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

function wallClock(timeZone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const seconds = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return seconds + (instant - Math.floor(instant / 1000) * 1000);
}

/** A wall time skipped by a daylight-saving change maps to the instant the clock jumped past it. */
function instantOf(timeZone: string, wall: number): number {
  let instant = wall - (wallClock(timeZone, wall) - wall);
  instant = wall - (wallClock(timeZone, instant) - instant);
  return instant;
}

export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

export function intervalStart(interval: BatchExportInterval, timeZone: string, at: Date): Date {
  const instant = at.getTime();
  const wall = wallClock(timeZone, instant);
  let start: number;
  switch (interval) {
    case 'every 5 minutes':
      // Every zone is a whole number of quarter hours off UTC: five minutes align alike everywhere.
      start = instant - (((instant % (5 * MINUTE)) + 5 * MINUTE) % (5 * MINUTE));
      break;
    case 'hour':
      start = hourStart(timeZone, instant, wall);
      break;
    case 'day':
      start = instantOf(timeZone, Math.floor(wall / DAY) * DAY);
      break;
    case 'week': {
      const midnight = Math.floor(wall / DAY) * DAY;
      const daysSinceMonday = (new Date(midnight).getUTCDay() + 6) % 7;
      start = instantOf(timeZone, midnight - daysSinceMonday * DAY);
      break;
    }
  }
  // A midnight skipped by a daylight-saving change can map past `at`: the interval began a day earlier.
  return start <= instant ? new Date(start) : intervalStart(interval, timeZone, new Date(instant - HOUR * 3));
}

/** Steps back again when a half-hour daylight-saving change (Lord Howe Island) repeated or skipped the hour. */
function hourStart(timeZone: string, instant: number, wall: number): number {
  let candidate = instant;
  let past = ((wall % HOUR) + HOUR) % HOUR;
  for (let step = 0; past !== 0 && step < 4; step++) {
    candidate -= past;
    const candidateWall = wallClock(timeZone, candidate);
    past = ((candidateWall % HOUR) + HOUR) % HOUR;
  }
  return candidate;
}

export function nextIntervalStart(interval: BatchExportInterval, timeZone: string, start: Date): Date {
  if (interval === 'hour') {
    for (let probe = start.getTime() + HOUR; probe < start.getTime() + 4 * HOUR; probe += 15 * MINUTE) {
      const next = intervalStart('hour', timeZone, new Date(probe));
      if (next > start) return next;
    }
    throw new Error(`no hour after ${start.toISOString()} in ${timeZone}`);
  }
  // Past the nominal length by a few hours for days and weeks, which DST makes 23 or 25 hours long.
  const slack = interval === 'day' || interval === 'week' ? 3 * HOUR : 0;
  const next = intervalStart(
    interval,
    timeZone,
    new Date(start.getTime() + intervalDuration(interval) + slack),
  );
  if (next <= start) throw new Error(`no interval after ${start.toISOString()} in ${timeZone}`);
  return next;
}

export function intervalsOverlapping(
  interval: BatchExportInterval,
  timeZone: string,
  from: Date,
  to: Date,
): DataInterval[] {
  const intervals: DataInterval[] = [];
  for (let start = intervalStart(interval, timeZone, from); start < to;) {
    const end = nextIntervalStart(interval, timeZone, start);
    intervals.push({ start, end });
    start = end;
  }
  return intervals;
}
