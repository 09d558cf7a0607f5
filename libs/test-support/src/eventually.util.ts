import { setTimeout as sleep } from 'node:timers/promises';

export interface EventuallyOptions {
  /** How long to keep asking: 30 s unless told. */
  timeoutMs?: number;
  /** The pause between two asks: 100 ms unless told. */
  intervalMs?: number;
  /** Appended to the timeout's message, read only then (a process's output, the last row read). */
  context?: () => string;
}

/** "Not yet" is undefined or false; anything else is the answer. */
export type Probe<T> = () => T | undefined | false | Promise<T | undefined | false>;

/**
 * Asks `probe` until it answers a value and returns that value; fails naming `what` once
 * `timeoutMs` have passed. A probe that throws fails at once: an error is a failure, not a "not
 * yet" (a probe that expects errors while the system comes up catches them itself).
 */
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

/**
 * Runs `assertion` until it passes. At the deadline it throws the assertion's last failure, so
 * Jest shows its diff rather than a bare timeout. Any error counts as "not yet" here.
 */
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
