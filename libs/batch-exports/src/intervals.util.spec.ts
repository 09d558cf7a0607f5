import { intervalsOverlapping, intervalStart, isKnownTimeZone, nextIntervalStart } from './intervals.util';

const at = (text: string) => new Date(text);
const iso = (date: Date) => date.toISOString();

describe('batch export intervals', () => {
  it('aligns five minutes and hours on the wall clock, also in zones 30 or 45 minutes off UTC', () => {
    expect(iso(intervalStart('every 5 minutes', 'UTC', at('2026-03-10T10:07:59.999Z')))).toBe(
      '2026-03-10T10:05:00.000Z',
    );
    expect(iso(intervalStart('hour', 'UTC', at('2026-03-10T10:59:59Z')))).toBe('2026-03-10T10:00:00.000Z');
    // Kolkata is UTC+05:30: its hours start at :30 UTC.
    expect(iso(intervalStart('hour', 'Asia/Kolkata', at('2026-03-10T10:10:00Z')))).toBe(
      '2026-03-10T09:30:00.000Z',
    );
    // Kathmandu is UTC+05:45.
    expect(iso(intervalStart('hour', 'Asia/Kathmandu', at('2026-03-10T10:10:00Z')))).toBe(
      '2026-03-10T09:15:00.000Z',
    );
    expect(iso(intervalStart('hour', 'UTC', at('2026-03-10T10:00:00Z')))).toBe('2026-03-10T10:00:00.000Z');
  });

  it('starts days at midnight and weeks on Monday midnight in the project time zone', () => {
    expect(iso(intervalStart('day', 'UTC', at('2026-03-10T23:59:59Z')))).toBe('2026-03-10T00:00:00.000Z');
    // 02:00 UTC on the 10th is still the 9th in New York (UTC-5 in winter... -4 from March 8th).
    expect(iso(intervalStart('day', 'America/New_York', at('2026-03-10T02:00:00Z')))).toBe(
      '2026-03-09T04:00:00.000Z',
    );
    expect(iso(intervalStart('day', 'Europe/Berlin', at('2026-01-15T23:30:00Z')))).toBe(
      '2026-01-15T23:00:00.000Z',
    );
    // 2026-03-11 is a Wednesday.
    expect(iso(intervalStart('week', 'UTC', at('2026-03-11T12:00:00Z')))).toBe('2026-03-09T00:00:00.000Z');
    expect(iso(intervalStart('week', 'UTC', at('2026-03-09T00:00:00Z')))).toBe('2026-03-09T00:00:00.000Z');
    expect(iso(intervalStart('week', 'Asia/Tokyo', at('2026-03-08T16:00:00Z')))).toBe(
      '2026-03-08T15:00:00.000Z',
    );
  });

  it('makes daylight-saving days 23 and 25 hours long, as the wall clock says', () => {
    // Europe/Berlin: clocks go forward on 2026-03-29 and back on 2026-10-25.
    const spring = intervalStart('day', 'Europe/Berlin', at('2026-03-29T12:00:00Z'));
    expect(iso(spring)).toBe('2026-03-28T23:00:00.000Z');
    expect(iso(nextIntervalStart('day', 'Europe/Berlin', spring))).toBe('2026-03-29T22:00:00.000Z');
    const autumn = intervalStart('day', 'Europe/Berlin', at('2026-10-25T12:00:00Z'));
    expect(iso(autumn)).toBe('2026-10-24T22:00:00.000Z');
    expect(iso(nextIntervalStart('day', 'Europe/Berlin', autumn))).toBe('2026-10-25T23:00:00.000Z');
    // The hours around the change are each one real hour long.
    const hours = intervalsOverlapping(
      'hour',
      'Europe/Berlin',
      at('2026-10-25T00:00:00Z'),
      at('2026-10-25T03:00:00Z'),
    );
    expect(hours.map(({ start }) => iso(start))).toEqual([
      '2026-10-25T00:00:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T02:00:00.000Z',
    ]);
  });

  it('handles a midnight that does not exist (a DST change at 00:00)', () => {
    // America/Santiago moved its clocks from 00:00 to 01:00 on 2025-09-07.
    const start = intervalStart('day', 'America/Santiago', at('2025-09-07T12:00:00Z'));
    expect(start.getTime()).toBeLessThanOrEqual(at('2025-09-07T12:00:00Z').getTime());
    expect(nextIntervalStart('day', 'America/Santiago', start).getTime()).toBeGreaterThan(
      at('2025-09-07T12:00:00Z').getTime(),
    );
  });

  it('tiles a range with adjacent intervals: each ends where the next starts, none twice, none missing', () => {
    for (const [interval, zone, from, to] of [
      ['every 5 minutes', 'Asia/Kathmandu', at('2026-03-01T00:00:00Z'), at('2026-03-03T00:00:00Z')],
      // Lord Howe Island moves its clocks by half an hour (back on 2026-04-05, forward on 2026-10-04).
      ['hour', 'Australia/Lord_Howe', at('2026-04-03T00:00:00Z'), at('2026-04-07T00:00:00Z')],
      ['hour', 'Australia/Lord_Howe', at('2026-10-02T00:00:00Z'), at('2026-10-06T00:00:00Z')],
      ['hour', 'Europe/Berlin', at('2026-03-27T00:00:00Z'), at('2026-03-31T00:00:00Z')],
      ['day', 'America/New_York', at('2026-01-01T00:00:00Z'), at('2026-12-31T00:00:00Z')],
      ['week', 'Europe/London', at('2026-01-01T00:00:00Z'), at('2026-12-31T00:00:00Z')],
    ] as const) {
      const tiles = intervalsOverlapping(interval, zone, from, to);
      expect(tiles[0].start.getTime()).toBeLessThanOrEqual(from.getTime());
      expect(tiles[tiles.length - 1].end.getTime()).toBeGreaterThanOrEqual(to.getTime());
      for (let i = 1; i < tiles.length; i++) expect(tiles[i].start).toEqual(tiles[i - 1].end);
      for (const tile of tiles) {
        expect(intervalStart(interval, zone, tile.start)).toEqual(tile.start);
        expect(intervalStart(interval, zone, new Date(tile.end.getTime() - 1))).toEqual(tile.start);
      }
    }
  });

  it('knows IANA zones and refuses made-up ones', () => {
    expect(isKnownTimeZone('Europe/Paris')).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
  });
});
