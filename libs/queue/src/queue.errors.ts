/**
 * The queue could not take the messages now: the broker is down, unreachable or did not
 * acknowledge within the timeout, or the in-process consumer failed. Transient: capture answers
 * 503 so that the SDK retries. Some of the messages may have been stored anyway (at-least-once);
 * the events table deduplicates them by UUID.
 */
export class QueueUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}

/** A message is larger than the broker accepts. Permanent for that message: capture answers 413. */
export class MessageTooLargeError extends Error {
  constructor(
    message: string,
    readonly maxBytes: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MessageTooLargeError';
  }
}
