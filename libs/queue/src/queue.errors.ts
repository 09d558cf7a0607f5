/**
 * Transient (capture answers 503, the SDK retries). Some messages may have been stored anyway;
 * the events table deduplicates them by UUID.
 */
export class QueueUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}

/** Permanent for that message: capture answers 413. */
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
