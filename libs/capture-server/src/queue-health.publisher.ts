import type { QueueMessage } from '@hogbase/event-contract';
import { QueueUnavailableError, type EventPublisher, type QueueReadiness } from '@hogbase/queue';
import type { CheckResult } from '@hogbase/service-runtime';

/** How long a failed publish keeps capture not ready when nothing has succeeded since. */
export const QUEUE_FAILURE_MEMORY_MS = 10_000;

/**
 * The publisher's readiness and its last publish (no report covers every failure); the memory of a
 * failure is bounded, as a capture out of rotation gets no publish to tell it the queue is back.
 */
export class QueueHealth implements EventPublisher {
  private lastFailure: { at: number; reason: string } | undefined;

  constructor(
    private readonly publisher: EventPublisher,
    private readonly now: () => number = Date.now,
  ) {}

  async publish(topic: string, messages: QueueMessage[]): Promise<void> {
    try {
      await this.publisher.publish(topic, messages);
      this.lastFailure = undefined;
    } catch (error) {
      if (error instanceof QueueUnavailableError)
        this.lastFailure = { at: this.now(), reason: error.message };
      throw error;
    }
  }

  close(): Promise<void> {
    return this.publisher.close();
  }

  ready(): QueueReadiness {
    const check = this.check();
    return check === true ? { ready: true } : { ready: false, reason: String(check) };
  }

  check(): CheckResult {
    const { ready, reason } = this.publisher.ready();
    if (!ready) return reason ?? 'the queue takes no events';
    const failure = this.lastFailure;
    if (failure && this.now() - failure.at < QUEUE_FAILURE_MEMORY_MS) {
      return `the last publish failed: ${failure.reason}`;
    }
    return true;
  }
}
