import { scheduledJobId, slotOf, untilNextTick } from './schedule.util';

describe('import-app schedule', () => {
  const at = Date.parse('2025-03-04T05:06:07.890Z');

  it('puts a time in the period of each task, hours and days in UTC whatever the minute', () => {
    expect(slotOf('runEveryMinute', at, 60_000).toISOString()).toBe('2025-03-04T05:06:00.000Z');
    expect(slotOf('runEveryMinute', at, 5_000).toISOString()).toBe('2025-03-04T05:06:05.000Z');
    expect(slotOf('runEveryHour', at, 5_000).toISOString()).toBe('2025-03-04T05:00:00.000Z');
    expect(slotOf('runEveryDay', at, 60_000).toISOString()).toBe('2025-03-04T00:00:00.000Z');
  });

  it('gives one job id per config, task and period, the same on every worker', () => {
    const hour = slotOf('runEveryHour', at, 60_000);
    const sameHour = slotOf('runEveryHour', at + 50 * 60_000, 60_000);
    expect(scheduledJobId(7, 'runEveryHour', hour)).toBe(scheduledJobId(7, 'runEveryHour', sameHour));
    expect(scheduledJobId(7, 'runEveryHour', hour)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5/);
    const others = [
      scheduledJobId(8, 'runEveryHour', hour),
      scheduledJobId(7, 'runEveryDay', hour),
      scheduledJobId(7, 'runEveryHour', new Date(hour.getTime() + 3_600_000)),
    ];
    expect(new Set([scheduledJobId(7, 'runEveryHour', hour), ...others]).size).toBe(4);
  });

  it('sleeps to the next tick boundary', () => {
    expect(untilNextTick(at, 60_000)).toBe(60_000 - 7_890);
    expect(untilNextTick(Date.parse('2025-03-04T05:06:00.000Z'), 60_000)).toBe(60_000);
  });
});
