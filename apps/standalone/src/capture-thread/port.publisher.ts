import type { MessagePort } from 'node:worker_threads';
import type { QueueMessage } from '@hogbase/event-contract';
import {
  MessageTooLargeError,
  QueueUnavailableError,
  type EventPublisher,
  type QueueReadiness,
} from '@hogbase/queue';
import type { FromCaptureThread, PublishFailure } from './capture-thread.protocol';

/** The queue's own error classes, by name. */
export function toPublishError(failure: PublishFailure): Error {
  if (failure.name === 'MessageTooLargeError') {
    return new MessageTooLargeError(failure.message, failure.maxBytes);
  }
  // Anything else leaves the events unacknowledged: the SDK retries them (503).
  return new QueueUnavailableError(failure.message);
}

export function toPublishFailure(error: unknown): PublishFailure {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const { maxBytes } = error as { maxBytes?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(typeof maxBytes === 'number' ? { maxBytes } : {}),
  };
}

/** Resolves when the main thread's publisher did, so a 200 still means what it means there. */
export class PortPublisher implements EventPublisher {
  private readonly pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  private nextId = 0;
  private closed = false;
  private drained: (() => void) | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly port: Pick<MessagePort, 'postMessage'>,
    private readiness: QueueReadiness,
  ) {}

  publish(topic: string, messages: QueueMessage[]): Promise<void> {
    if (this.closed) return Promise.reject(new QueueUnavailableError('capture is stopping'));
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      const message: FromCaptureThread = { type: 'publish', id, topic, messages };
      this.port.postMessage(message);
    });
  }

  settle(id: number, failure: PublishFailure | undefined): void {
    const publish = this.pending.get(id);
    if (!publish) return;
    this.pending.delete(id);
    if (failure) publish.reject(toPublishError(failure));
    else publish.resolve();
    if (this.pending.size === 0) this.drained?.();
  }

  setReadiness(readiness: QueueReadiness): void {
    this.readiness = readiness;
  }

  ready(): QueueReadiness {
    return this.closed ? { ready: false, reason: 'capture is stopping' } : this.readiness;
  }

  close(): Promise<void> {
    this.closed = true;
    this.closing ??=
      this.pending.size === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            this.drained = resolve;
          });
    return this.closing;
  }
}
