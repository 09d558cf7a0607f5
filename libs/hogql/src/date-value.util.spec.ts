import {
  addMicros,
  formatClickHouseDate,
  formatClickHouseDateTime,
  ONE_DAY_MICROS,
  parseAbsoluteDate,
  parseFilterDate,
} from './date-value.util';

const NOW = new Date('2024-03-31T10:20:30.456Z');
const format = (text: string, now = NOW) => {
  const value = parseFilterDate(text, now);
  return value && { text: formatClickHouseDateTime(value), dateOnly: value.dateOnly };
};

describe('parseAbsoluteDate', () => {
  it.each([
    ['2024-01-31', '2024-01-31 00:00:00.000000', true],
    [' 2024-01-31 ', '2024-01-31 00:00:00.000000', true],
    ['2024-01-31T10:20', '2024-01-31 10:20:00.000000', false],
    ['2024-01-31 10:20:30', '2024-01-31 10:20:30.000000', false],
    ['2024-01-31T10:20:30.5', '2024-01-31 10:20:30.500000', false],
    ['2024-01-31T10:20:30.123456789', '2024-01-31 10:20:30.123456', false],
    ['2024-01-31T10:20:30Z', '2024-01-31 10:20:30.000000', false],
    ['2024-01-31t10:20:30z', '2024-01-31 10:20:30.000000', false],
    ['2024-01-31T10:20:30+02:00', '2024-01-31 08:20:30.000000', false],
    ['2024-01-31T00:20:30+0100', '2024-01-30 23:20:30.000000', false],
    ['2024-01-31T23:00:00-05', '2024-02-01 04:00:00.000000', false],
    ['1900-01-01', '1900-01-01 00:00:00.000000', true],
    ['2299-12-31T23:59:59.999999Z', '2299-12-31 23:59:59.999999', false],
  ])('reads %s', (text, expected, dateOnly) => {
    const value = parseAbsoluteDate(text);
    expect(value && formatClickHouseDateTime(value)).toBe(expected);
    expect(value?.dateOnly).toBe(dateOnly);
  });

  it.each([
    '2024-02-30',
    '2023-02-29',
    '2024-13-01',
    '2024-00-10',
    '2024-01-31T24:00',
    '2024-01-31T10:60',
    '1899-12-31',
    '2300-01-01',
    '24-01-31',
    '2024/01/31',
    '2024-01-31T10',
    '2024-01-31T10:20:30+15:00',
    'yesterday',
    '',
    '1706659200',
  ])('refuses %j', (text) => {
    expect(parseAbsoluteDate(text)).toBeUndefined();
  });
});

describe('parseFilterDate', () => {
  it.each([
    ['-7d', '2024-03-24 10:20:30.456000'],
    ['7d', '2024-03-24 10:20:30.456000'],
    ['-24h', '2024-03-30 10:20:30.456000'],
    ['-30M', '2024-03-31 09:50:30.456000'],
    ['-10s', '2024-03-31 10:20:20.456000'],
    ['-2w', '2024-03-17 10:20:30.456000'],
    ['-1m', '2024-03-02 10:20:30.456000'],
    ['-1q', '2023-12-31 10:20:30.456000'],
    ['-1y', '2023-03-31 10:20:30.456000'],
  ])('counts %s back from now', (text, expected) => {
    expect(format(text)).toEqual({ text: expected, dateOnly: false });
  });

  it('reads absolute dates too', () => {
    expect(format('2024-01-31')).toEqual({ text: '2024-01-31 00:00:00.000000', dateOnly: true });
  });

  it.each(['-7x', '-d', '--7d', '-1234567d', '-500y'])('refuses %j', (text) => {
    expect(parseFilterDate(text, NOW)).toBeUndefined();
  });
});

describe('formatting', () => {
  it('formats dates and shifted values', () => {
    const value = parseAbsoluteDate('2024-02-28')!;
    expect(formatClickHouseDate(addMicros(value, ONE_DAY_MICROS))).toBe('2024-02-29');
    expect(formatClickHouseDateTime(addMicros(value, -1n))).toBe('2024-02-27 23:59:59.999999');
  });
});
