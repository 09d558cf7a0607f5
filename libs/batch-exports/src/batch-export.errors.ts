/** The run ends `Failed` instead of `FailedRetryable`; any other error is retried with back-off. */
export class NonRetryableExportError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NonRetryableExportError';
  }
}
