import type { QueueMessage } from '@hogbase/event-contract';
import { QueueUnavailableError, type EventPublisher } from '@hogbase/queue';
import type { CheckResult } from '@hogbase/service-runtime';

/** How long a failed publish keeps capture not ready when nothing has succeeded since. */
export const QUEUE_FAILURE_MEMORY_MS = 10_000;

/** What a queue end says of its readiness (EventPublisher.ready, where the publisher has it). */
interface QueueReadinessAnswer {
  ready: boolean;
  reason?: string;
}

/** The ways a publisher may tell whether it takes events now. */
interface SelfReporting {
  ready?: () => QueueReadinessAnswer;
  healthy?: () => boolean;
}

/**
 * Capture's publisher, able to say whether the queue takes events now: capture is ready when it
 * does.
 *
 * A publisher that reports its own readiness is asked (the broker reachable, the in-process bus
 * with a consumer). Its publishes are judged too, as no report covers every failure (the bus is up
 * while the storage behind it refuses the batch): one refused as unavailable makes capture not
 * ready until one succeeds or QUEUE_FAILURE_MEMORY_MS passed. The memory is bounded because a
 * capture taken out of rotation receives no publish that could tell it the queue is back.
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

  ready(): QueueReadinessAnswer {
    const check = this.check();
    return check === true ? { ready: true } : { ready: false, reason: String(check) };
  }

  /** `true` when the queue takes events, else why not. */
  check(): CheckResult {
    const publisher = this.publisher as EventPublisher & SelfReporting;
    if (typeof publisher.ready === 'function') {
      const { ready, reason } = publisher.ready();
      if (!ready) return reason ?? 'the queue takes no events';
    } else if (typeof publisher.healthy === 'function' && !publisher.healthy()) {
      return 'the queue takes no events';
    }
    const failure = this.lastFailure;
    if (failure && this.now() - failure.at < QUEUE_FAILURE_MEMORY_MS) {
      return `the last publish failed: ${failure.reason}`;
    }
    return true;
  }
}
