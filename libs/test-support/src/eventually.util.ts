import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** Default 30 s. */
  timeoutMs?: number;
  /** Default 100 ms. */
  intervalMs?: number;
  /** Appended to the timeout's message (a process's output, the last row read). */
  context?: () => string;
}

/** "Not yet" is undefined or false; anything else is the answer. */
export type Probe<T> = () => T | undefined | false | Promise<T | undefined | false>;

/** A probe that throws fails at once: an error is a failure, not a "not yet". */
export async function eventually<T>(
  what: string,
  probe: Probe<T>,
  options: EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 100, context } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const more = context?.();
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${more ? `:\n${more}` : ''}`);
    }
    await sleep(intervalMs);
  }
}

/** At the deadline throws the assertion's last failure, so Jest shows its diff; any error is "not yet". */
export async function eventuallyPasses(
  assertion: () => unknown,
  options: Omit<EventuallyOptions, 'context'> = {},
): Promise<void> {
  let failure: unknown;
  try {
    await eventually(
      'the assertion to pass',
      async () => {
        try {
          await assertion();
          return true;
        } catch (error) {
          failure = error;
          return false;
        }
      },
      options,
    );
  } catch (timeout) {
    throw failure ?? timeout;
  }
}
