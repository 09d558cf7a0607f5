import { v5 as uuidv5 } from 'uuid';

export const SCHEDULED_TASKS = ['runEveryMinute', 'runEveryHour', 'runEveryDay'] as const;
export type ScheduledTask = (typeof SCHEDULED_TASKS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Any fixed namespace: the same (config, task, slot) gives the same job id everywhere. */
const JOB_ID_NAMESPACE = '6f1d3c2e-8a4b-4f0e-9c57-2b7e1d9a0c11';

export function isScheduledTask(name: unknown): name is ScheduledTask {
  return typeof name === 'string' && (SCHEDULED_TASKS as readonly string[]).includes(name);
}

/** `minuteMs` is shorter in tests. */
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

/** Aligned to the epoch, so every worker agrees. */
export function slotOf(task: ScheduledTask, time: number, minuteMs: number): Date {
  const period = taskPeriodMs(task, minuteMs);
  return new Date(Math.floor(time / period) * period);
}

/** The same on every worker: one job per (config, task, period) however many workers tick. */
export function scheduledJobId(pluginConfigId: number, task: ScheduledTask, slot: Date): string {
  return uuidv5(`${pluginConfigId}/${task}/${slot.toISOString()}`, JOB_ID_NAMESPACE);
}

export function untilNextTick(now: number, tickMs: number): number {
  return tickMs - (now % tickMs);
}
