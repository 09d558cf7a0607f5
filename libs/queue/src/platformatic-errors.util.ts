import { MessageTooLargeError, QueueUnavailableError } from './queue.errors';

const TOO_LARGE_IDS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** Causes, and an AggregateError's errors (@platformatic/kafka's one failure per broker and retry). */
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

/** Anything that is not the client's error (a bug) is returned unchanged. */
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
