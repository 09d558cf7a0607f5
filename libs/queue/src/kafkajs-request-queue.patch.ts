import { createRequire } from 'node:module';

interface RequestQueueInternals {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** Checked by a test. */
export const PATCHED_KAFKAJS_VERSION = '2.2.4';
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

let applied: boolean | undefined;

/**
 * Fixes kafkajs 2.2.4's idle request-queue timer (tulios/kafkajs#1751, #1704): after every response
 * it arms a timer for `throttledUntil - Date.now()` even with nothing pending; `throttledUntil` starts
 * at -1, Node clamps the negative delay to 1 ms, and each connection spins a 1 ms loop. This one
 * schedules a check only with requests waiting or a throttle ending later. Returns whether applied.
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
