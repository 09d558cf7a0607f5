/** Nothing was sent, so the message is the same whether or not anything listens: no network leaks. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';

  constructor(message: string) {
    super(message);
    this.name = 'EgressRefusedError';
  }
}

/** The refusal in an error or its causes (fetch wraps it); by code, as it may come from another realm. */
export function egressRefusalOf(error: unknown): EgressRefusedError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === 'object'; depth += 1) {
    if ((current as { code?: unknown }).code === 'EGRESS_REFUSED') return current as EgressRefusedError;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
