import { createRequire } from 'node:module';

/** The slice of kafkajs's internal RequestQueue (kafkajs/src/network/requestQueue) the fix touches. */
interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** The kafkajs release whose RequestQueue this fix was written against (and checked by a test). */
export const PATCHED_KAFKAJS_VERSION = '2.2.4';
/** kafkajs's own interval for re-checking a queue that holds requests. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

let applied: boolean | undefined;

/**
 * Fixes kafkajs 2.2.4's idle request-queue timer (tulios/kafkajs#1751, #1704; unreleased fixes in
 * #1755/#1768). After every broker response, `scheduleCheckPendingRequests` sets a timer for
 * `throttledUntil - Date.now()` even when nothing is pending; `throttledUntil` starts at -1, so
 * the delay is about minus the current epoch in ms. Node 24 prints `TimeoutNegativeWarning:
 * -17954... is a negative number`, clamps the delay to 1 ms, and the timer re-arms itself on
 * every firing: each broker connection spins a 1 ms loop for as long as it is open.
 *
 * The replacement schedules a check only when there is something to check: requests waiting, or
 * a client-side throttle that ends later. Everything else is kafkajs's own logic. It is applied
 * only to the release it was written for; returns whether it is applied.
 */
export function patchKafkaJsRequestQueue(): boolean {
  if (applied !== undefined) return applied;
  const load = createRequire(__filename);
  const { version } = load('kafkajs/package.json') as { version: string };
  const RequestQueue = load('kafkajs/src/network/requestQueue') as { prototype: RequestQueueInternals };
  applied =
    version === PATCHED_KAFKAJS_VERSION &&
    typeof RequestQueue.prototype.scheduleCheckPendingRequests === 'function' &&
    typeof RequestQueue.prototype.checkPendingRequests === 'function';
  if (!applied) return false;

  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(
    this: RequestQueueInternals,
  ): void {
    if (this.throttleCheckTimeoutId) return;
    const untilUnthrottled = this.throttledUntil - Date.now();
    if (this.pending.length === 0 && untilUnthrottled <= 0) return;
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      untilUnthrottled > 0 ? untilUnthrottled : CHECK_PENDING_REQUESTS_INTERVAL_MS,
    );
  };
  return true;
}
