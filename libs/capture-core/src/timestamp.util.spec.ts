import {
  computeEventTimestamp,
  formatInstant,
  parseSentAtQueryParam,
  parseTimestamp,
  type EventTimestampInput,
} from './timestamp.util';

const now = new Date('2023-01-01T12:00:00.000Z');

function compute(overrides: Partial<EventTimestampInput>): string {
  return computeEventTimestamp({
    timestamp: undefined,
    offset: undefined,
    sentAt: null,
    ignoreSentAt: false,
    now,
    ...overrides,
  });
}

function instant(text: string) {
  const parsed = parseTimestamp(text);
  if (!parsed) throw new Error(`fixture does not parse: ${text}`);
  return parsed;
}

describe('computeEventTimestamp (rust/common/types/src/timestamp.rs)', () => {
  it('corrects clock skew: now=12:00:00, sent_at=12:00:05, timestamp=11:59:55 gives 11:59:50', () => {
    expect(compute({ timestamp: '2023-01-01T11:59:55Z', sentAt: instant('2023-01-01T12:00:05Z') })).toBe(
      '2023-01-01T11:59:50.000Z',
    );
  });

  it('keeps the timestamp as sent when there is no sent_at', () => {
    expect(compute({ timestamp: '2023-01-01T11:59:55+01:00' })).toBe('2023-01-01T10:59:55.000Z');
  });

  it('ignores sent_at when $ignore_sent_at is true', () => {
    expect(
      compute({
        timestamp: '2023-01-01T11:59:55Z',
        sentAt: instant('2023-01-01T12:00:05Z'),
        ignoreSentAt: true,
      }),
    ).toBe('2023-01-01T11:59:55.000Z');
  });

  it('answers now when there is no timestamp', () => {
    expect(compute({})).toBe('2023-01-01T12:00:00.000Z');
    expect(compute({ timestamp: null, sentAt: instant('2023-01-01T12:00:05Z') })).toBe(
      '2023-01-01T12:00:00.000Z',
    );
  });

  it('answers now when the timestamp does not parse', () => {
    for (const timestamp of ['yesterday', '2023-13-01T00:00:00Z', '2023-02-30', '', '12', {}, [], true]) {
      expect(compute({ timestamp })).toBe('2023-01-01T12:00:00.000Z');
    }
  });

  it('lets offset (ms before now) override timestamp and sent_at', () => {
    expect(
      compute({ timestamp: '2020-01-01T00:00:00Z', sentAt: instant('2023-01-01T12:00:05Z'), offset: 1500 }),
    ).toBe('2023-01-01T11:59:58.500Z');
    expect(compute({ offset: 0 })).toBe('2023-01-01T12:00:00.000Z');
  });

  it('ignores an offset that is not a number', () => {
    expect(compute({ timestamp: '2023-01-01T11:00:00Z', offset: '1500' })).toBe('2023-01-01T11:00:00.000Z');
  });

  it('clamps to now an event more than 23 hours in the future, and keeps one at exactly 23 hours', () => {
    expect(compute({ timestamp: '2023-01-02T11:00:00.001Z' })).toBe('2023-01-01T12:00:00.000Z');
    expect(compute({ timestamp: '2023-01-02T11:00:00Z' })).toBe('2023-01-02T11:00:00.000Z');
    expect(compute({ offset: -24 * 3_600_000 })).toBe('2023-01-01T12:00:00.000Z');
  });

  it('answers the Unix epoch for a year below 0 or above 9999', () => {
    expect(compute({ offset: 70_000 * 365 * 86_400_000 })).toBe('1970-01-01T00:00:00.000Z');
    expect(compute({ timestamp: '0001-01-01T00:00:00Z', sentAt: instant('9000-01-01T00:00:00Z') })).toBe(
      '1970-01-01T00:00:00.000Z',
    );
    // Past the Date range entirely.
    expect(compute({ offset: 1e300 })).toBe('1970-01-01T00:00:00.000Z');
  });

  it('keeps years 0 and 9999 as they are', () => {
    expect(compute({ timestamp: '0000-03-01T00:00:00Z' })).toBe('0000-03-01T00:00:00.000Z');
    expect(compute({ timestamp: '1066-10-14T09:00:00Z' })).toBe('1066-10-14T09:00:00.000Z');
  });

  it('keeps microseconds through the skew correction', () => {
    expect(compute({ timestamp: '2023-01-01T11:59:55.123456Z' })).toBe('2023-01-01T11:59:55.123456Z');
    expect(
      compute({ timestamp: '2023-01-01T11:59:55.123456Z', sentAt: instant('2023-01-01T12:00:05.000789Z') }),
    ).toBe('2023-01-01T11:59:50.122667Z');
    expect(compute({ timestamp: '2023-01-01T11:59:55.100000+00:00' })).toBe('2023-01-01T11:59:55.100000Z');
  });

  it('truncates precision past microseconds', () => {
    expect(compute({ timestamp: '2023-01-01T11:59:55.123456789Z' })).toBe('2023-01-01T11:59:55.123456Z');
  });
});

describe('parseTimestamp', () => {
  const cases: Array<[unknown, string]> = [
    ['2023-01-01T10:00:00Z', '2023-01-01T10:00:00.000Z'],
    ['2023-01-01t10:00:00z', '2023-01-01T10:00:00.000Z'],
    ['2023-01-01T10:00:00.5Z', '2023-01-01T10:00:00.500Z'],
    ['2023-01-01T10:00:00,25Z', '2023-01-01T10:00:00.250Z'],
    ['2023-01-01T10:00:00+03', '2023-01-01T07:00:00.000Z'],
    ['2023-01-01T10:00:00+0330', '2023-01-01T06:30:00.000Z'],
    ['2023-01-01T10:00:00-05:00', '2023-01-01T15:00:00.000Z'],
    ['2023-01-01T23:30:00-01:00', '2023-01-02T00:30:00.000Z'],
    ['2023-01-01T10:00:00', '2023-01-01T10:00:00.000Z'],
    ['2023-01-01 10:00:00', '2023-01-01T10:00:00.000Z'],
    ['2023-01-01 10:00:00 UTC', '2023-01-01T10:00:00.000Z'],
    ['2023-01-01T10:00', '2023-01-01T10:00:00.000Z'],
    ['2023-01-01', '2023-01-01T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['  2023-01-01T10:00:00Z  ', '2023-01-01T10:00:00.000Z'],
    ['2016-12-31T23:59:60Z', '2017-01-01T00:00:00.000Z'],
    ['2023/01/02', '2023-01-02T00:00:00.000Z'],
    ['2023/1/2 03:04:05', '2023-01-02T03:04:05.000Z'],
    ['01/02/2023', '2023-01-02T00:00:00.000Z'],
    ['Tue, 1 Jul 2003 10:52:37 +0200', '2003-07-01T08:52:37.000Z'],
    ['1 Jul 2003 10:52:37 GMT', '2003-07-01T10:52:37.000Z'],
    ['1672574400', '2023-01-01T12:00:00.000Z'],
    ['1672574400.25', '2023-01-01T12:00:00.250Z'],
    ['1672574400123', '2023-01-01T12:00:00.123Z'],
    ['1672574400123456', '2023-01-01T12:00:00.123456Z'],
    ['1672574400123456789', '2023-01-01T12:00:00.123456Z'],
    [1672574400, '2023-01-01T12:00:00.000Z'],
    [1672574400123, '2023-01-01T12:00:00.123Z'],
  ];
  it.each(cases)('reads %p as %s', (input, expected) => {
    const parsed = parseTimestamp(input);
    expect(parsed && formatInstant(parsed)).toBe(expected);
  });

  const invalid: unknown[] = [
    '2023-02-29',
    '2023-00-10',
    '2023-01-32',
    '2023-01-01T24:00:00Z',
    '2023-01-01T10:60:00Z',
    '2023-01-01T10:00:00+25:00',
    '2023-01-01T10:00:00 garbage',
    '13/45/2023',
    'Tue, 1 Foo 2003 10:52:37 +0200',
    '123',
    '12345678901',
    'now',
    '',
    `2023-01-01T10:00:00.${'1'.repeat(100)}Z`,
    NaN,
    Infinity,
    null,
    { date: '2023-01-01' },
  ];
  it.each(invalid)('refuses %p', (input) => {
    expect(parseTimestamp(input)).toBeNull();
  });

  it('refuses a megabyte-long string without running a regex over it', () => {
    expect(parseTimestamp(`2023-01-01T10:00:00Z${' '.repeat(1_000_000)}`)).toBeNull();
  });
});

describe('formatInstant and parseTimestamp agree with Date', () => {
  it('on random instants over years 0-9999, in both directions', () => {
    let state = 12_345;
    const next = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
    const min = -62_167_219_200_000;
    const max = 253_402_300_799_999;
    for (let round = 0; round < 20_000; round++) {
      const epochMs = Math.floor(min + next() * (max - min));
      const iso = new Date(epochMs).toISOString();
      expect(formatInstant({ epochMs, microsOfMs: 0, precise: false })).toBe(iso);
      expect(parseTimestamp(iso)).toEqual({ epochMs, microsOfMs: 0, precise: false });
      // The same instant through the general (regex) path, with an offset.
      expect(parseTimestamp(iso.replace('Z', '+00:00'))?.epochMs).toBe(epochMs);
    }
  });

  it('formats microseconds', () => {
    expect(formatInstant({ epochMs: 0, microsOfMs: 7, precise: false })).toBe('1970-01-01T00:00:00.000007Z');
    expect(formatInstant({ epochMs: -1, microsOfMs: 0, precise: true })).toBe('1969-12-31T23:59:59.999000Z');
  });
});

describe('parseSentAtQueryParam', () => {
  it('reads milliseconds', () => {
    expect(formatInstant(parseSentAtQueryParam('1672574400123')!)).toBe('2023-01-01T12:00:00.123Z');
  });

  it('ignores values in 2020 or earlier, such as seconds', () => {
    expect(parseSentAtQueryParam('1672574400')).toBeNull();
    expect(parseSentAtQueryParam('1609459199999')).toBeNull();
    expect(parseSentAtQueryParam('1609459200000')).not.toBeNull();
  });

  it('ignores what is not a number of milliseconds', () => {
    for (const value of [undefined, '', 'abc', '1.5e12', '-1672574400123', '9'.repeat(30)]) {
      expect(parseSentAtQueryParam(value)).toBeNull();
    }
  });
});
