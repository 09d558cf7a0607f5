import { fromClickHouseDateTime64, toClickHouseDateTime64 } from './clickhouse-datetime.util';

describe('toClickHouseDateTime64', () => {
  it.each([
    ['2024-01-02T03:04:05.123456Z', '2024-01-02 03:04:05.123456'],
    ['2024-01-02T03:04:05Z', '2024-01-02 03:04:05.000000'],
    ['2024-01-02T03:04:05.1Z', '2024-01-02 03:04:05.100000'],
    ['2024-01-02T03:04:05.123Z', '2024-01-02 03:04:05.123000'],
    ['2024-01-02T03:04:05,5Z', '2024-01-02 03:04:05.500000'],
    ['2024-01-02T03:04:05.123456789Z', '2024-01-02 03:04:05.123456'],
    ['2024-01-02T03:04:05.1234567891Z', '2024-01-02 03:04:05.123456'],
    ['2024-01-02 03:04:05.000001', '2024-01-02 03:04:05.000001'],
    ['2024-01-02T03:04Z', '2024-01-02 03:04:00.000000'],
    ['2024-01-02', '2024-01-02 00:00:00.000000'],
    ['2024-01-02t03:04:05z', '2024-01-02 03:04:05.000000'],
  ])('converts %s to %s', (iso, expected) => {
    expect(toClickHouseDateTime64(iso)).toBe(expected);
  });

  it.each([
    ['2024-01-02T03:04:05.123456+02:00', '2024-01-02 01:04:05.123456'],
    ['2024-01-02T03:04:05.123456-0530', '2024-01-02 08:34:05.123456'],
    ['2024-01-01T01:00:00.000001+03', '2023-12-31 22:00:00.000001'],
    ['2024-12-31T23:30:00.5-01:00', '2025-01-01 00:30:00.500000'],
  ])('moves %s with an offset to UTC (%s)', (iso, expected) => {
    expect(toClickHouseDateTime64(iso)).toBe(expected);
  });

  it('gives the same text for a UTC timestamp written with Z (the fast path) and with +00:00', () => {
    // A fixed walk over the range rather than random values, so a failure names its input every run.
    for (let millis = Date.UTC(1900, 0, 1); millis < Date.UTC(2299, 11, 31); millis += 7_777_777_777_123) {
      const iso = new Date(millis).toISOString();
      expect(toClickHouseDateTime64(iso)).toBe(toClickHouseDateTime64(iso.replace('Z', '+00:00')));
    }
    expect(() => toClickHouseDateTime64('2023-02-29T00:00:00Z')).toThrow(/Not a valid date/);
    expect(() => toClickHouseDateTime64('1899-12-31T23:59:59Z')).toThrow(/outside/);
  });

  it('reads a timestamp without an offset as UTC, whatever the machine time zone', () => {
    expect(toClickHouseDateTime64('2024-06-01T12:00:00.25')).toBe('2024-06-01 12:00:00.250000');
  });

  it('accepts a Date, with its milliseconds', () => {
    expect(toClickHouseDateTime64(new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999)))).toBe(
      '2024-02-29 23:59:59.999000',
    );
  });

  it('accepts the 29th of February in a leap year only', () => {
    expect(toClickHouseDateTime64('2000-02-29T00:00:00Z')).toBe('2000-02-29 00:00:00.000000');
    expect(() => toClickHouseDateTime64('2100-02-29T00:00:00Z')).toThrow(RangeError);
    expect(() => toClickHouseDateTime64('2023-02-29T00:00:00Z')).toThrow(RangeError);
  });

  it.each([
    '',
    'yesterday',
    '1704164645',
    '2024-13-01T00:00:00Z',
    '2024-04-31T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:60:00Z',
    '2024-01-01T00:00:60Z',
    '2024-01-01T00:00:00+25:00',
    '2024-01-01T00:00:00.Z',
    '2024-01-01T00:00:0a.1Z',
    '2024-01-01 00:00:00.1Z x',
    '2024-01-01T00:00:00Z trailing',
  ])('refuses %j', (value) => {
    expect(() => toClickHouseDateTime64(value)).toThrow(RangeError);
  });

  it('refuses an invalid Date', () => {
    expect(() => toClickHouseDateTime64(new Date('nope'))).toThrow(RangeError);
  });

  it("refuses years outside DateTime64's range instead of letting ClickHouse clamp them", () => {
    expect(() => toClickHouseDateTime64('0099-01-01T00:00:00Z')).toThrow(/range/);
    expect(() => toClickHouseDateTime64('1899-12-31T23:59:59Z')).toThrow(/range/);
    expect(() => toClickHouseDateTime64('2300-01-01T00:00:00Z')).toThrow(/range/);
    expect(toClickHouseDateTime64('1900-01-01T00:00:00Z')).toBe('1900-01-01 00:00:00.000000');
    expect(toClickHouseDateTime64('2299-12-31T23:59:59.999999Z')).toBe('2299-12-31 23:59:59.999999');
    expect(() => toClickHouseDateTime64('2299-12-31T23:00:00-02:00')).toThrow(/range/);
  });
});

describe('fromClickHouseDateTime64', () => {
  it('turns ClickHouse text back into ISO 8601 UTC with the same fraction', () => {
    expect(fromClickHouseDateTime64('2024-01-02 03:04:05.123456')).toBe('2024-01-02T03:04:05.123456Z');
    expect(fromClickHouseDateTime64('2024-01-02 03:04:05.120')).toBe('2024-01-02T03:04:05.120Z');
    expect(fromClickHouseDateTime64('2024-01-02 03:04:05')).toBe('2024-01-02T03:04:05Z');
  });

  it('round-trips with toClickHouseDateTime64', () => {
    const iso = '2031-07-15T08:09:10.000007Z';
    expect(fromClickHouseDateTime64(toClickHouseDateTime64(iso))).toBe(iso);
  });

  it('refuses anything else', () => {
    expect(() => fromClickHouseDateTime64('2024-01-02T03:04:05Z')).toThrow(RangeError);
  });
});
