import { MessageTooLargeError, QueueUnavailableError } from './queue.errors';

/** Broker answers refusing a record or a batch for its size (Kafka protocol error ids). */
const TOO_LARGE_IDS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/**
 * The error and everything it wraps: causes, and the errors an AggregateError collects
 * (@platformatic/kafka reports one failure per broker and retry that way).
 */
function errorTree(error: unknown): unknown[] {
  const seen: unknown[] = [];
  const pending = [error];
  while (pending.length > 0 && seen.length < 50) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.includes(current)) continue;
    seen.push(current);
    if (current instanceof Error) {
      pending.push(current.cause);
      if (current instanceof AggregateError) pending.push(...(current.errors as unknown[]));
    }
  }
  return seen;
}

function isPlatformaticError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('PLT_KFK_');
}

/**
 * Maps a @platformatic/kafka failure to the queue's errors: the broker refusing a message as too
 * large becomes MessageTooLargeError; every other broker or network failure
 * QueueUnavailableError. Anything that is not the client's error (a bug) is returned unchanged.
 */
export function platformaticQueueError(error: unknown, what: string): unknown {
  if (error instanceof QueueUnavailableError || error instanceof MessageTooLargeError) return error;
  const tree = errorTree(error);
  if (tree.some((item) => TOO_LARGE_IDS.has(String((item as { apiId?: unknown } | null)?.apiId)))) {
    return new MessageTooLargeError(`${what}: the broker refused a message as too large`, undefined, {
      cause: error,
    });
  }
  if (tree.some(isPlatformaticError)) {
    const detail = tree
      .filter((item): item is Error => item instanceof Error && !(item instanceof AggregateError))
      .map((item) => item.message)
      .find((message) => message.length > 0);
    const message = error instanceof Error ? error.message : String(error);
    return new QueueUnavailableError(
      `${what}: ${detail && detail !== message ? `${message} (${detail})` : message}`,
      {
        cause: error,
      },
    );
  }
  return error;
}
