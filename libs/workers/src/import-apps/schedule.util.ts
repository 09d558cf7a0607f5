import { v5 as uuidv5 } from 'uuid';

/** PostHog's scheduled tasks: exported functions the server calls with `meta` on their period. */
export const SCHEDULED_TASKS = ['runEveryMinute', 'runEveryHour', 'runEveryDay'] as const;
export type ScheduledTask = (typeof SCHEDULED_TASKS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Any fixed namespace: it only has to make the same (config, task, slot) give the same job id everywhere. */
const JOB_ID_NAMESPACE = '6f1d3c2e-8a4b-4f0e-9c57-2b7e1d9a0c11';

export function isScheduledTask(name: unknown): name is ScheduledTask {
  return typeof name === 'string' && (SCHEDULED_TASKS as readonly string[]).includes(name);
}

/** A task's period: `minuteMs` for runEveryMinute (shorter in tests), real hours and days (UTC) otherwise. */
export function taskPeriodMs(task: ScheduledTask, minuteMs: number): number {
  switch (task) {
    case 'runEveryMinute':
      return minuteMs;
    case 'runEveryHour':
      return HOUR_MS;
    case 'runEveryDay':
      return DAY_MS;
  }
}

/** The start of the period `time` falls in (aligned to the epoch, so every worker agrees). */
export function slotOf(task: ScheduledTask, time: number, minuteMs: number): Date {
  const period = taskPeriodMs(task, minuteMs);
  return new Date(Math.floor(time / period) * period);
}

/**
 * The job id of one run: the same on every worker, so the job engine keeps a single job per
 * (config, task, period) however many workers tick, and a worker that ticks again within the
 * period (an hourly task is offered every minute) adds nothing.
 */
export function scheduledJobId(pluginConfigId: number, task: ScheduledTask, slot: Date): string {
  return uuidv5(`${pluginConfigId}/${task}/${slot.toISOString()}`, JOB_ID_NAMESPACE);
}

/** Milliseconds from `now` to the next multiple of `tickMs`. */
export function untilNextTick(now: number, tickMs: number): number {
  return tickMs - (now % tickMs);
}
