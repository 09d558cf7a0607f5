import type { QueueLogger } from './queue-logger.util';
import type { QueueReadiness } from './queue.types';

/** What the consumer is doing; each change is logged once. */
export type KafkaConsumerStatus =
  | 'idle'
  | 'starting'
  | 'consuming'
  | 'rejoining'
  | 'kafka_unavailable'
  | 'handler_failing'
  | 'stopping'
  | 'stopped'
  | 'failed';

type Lifecycle = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped' | 'failed';

interface FailingBatch {
  topic: string;
  partition: number;
  firstOffset: string;
  error: unknown;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The facts the consumer's events report, as one status logged once per change (not per retry). */
export class KafkaConsumerState {
  private lifecycle: Lifecycle = 'idle';
  private isJoined = false;
  private assigned: Record<string, number[]> = {};
  private kafkaProblem: string | undefined;
  private failure: unknown;
  private readonly failingBatches = new Map<string, FailingBatch>();
  private current: KafkaConsumerStatus = 'idle';

  constructor(
    private readonly logger: QueueLogger,
    private readonly groupId: string,
  ) {}

  get status(): KafkaConsumerStatus {
    return this.current;
  }

  get assignment(): Record<string, number[]> {
    return Object.fromEntries(
      Object.entries(this.assigned).map(([topic, partitions]) => [topic, [...partitions]]),
    );
  }

  /** Alive: starting or running (a transient problem included). */
  get alive(): boolean {
    return this.lifecycle === 'starting' || this.lifecycle === 'running';
  }

  /** In the group (since the last join, until a rebalance or a crash). */
  get joined(): boolean {
    return this.isJoined;
  }

  get stopRequested(): boolean {
    return this.lifecycle === 'stopping' || this.lifecycle === 'stopped';
  }

  readiness(): QueueReadiness {
    const reason = this.notReadyReason();
    return reason === undefined ? { ready: true } : { ready: false, reason };
  }

  starting(): void {
    this.lifecycle = 'starting';
    this.update();
  }

  joinedGroup(assignment: Record<string, number[]>): void {
    this.isJoined = true;
    this.assigned = assignment;
    this.kafkaProblem = undefined;
    // A new assignment: failures of partitions this member may no longer own are stale.
    this.failingBatches.clear();
    if (this.lifecycle === 'starting') this.lifecycle = 'running';
    this.update();
  }

  rebalancing(): void {
    this.isJoined = false;
    this.update();
  }

  kafkaUnavailable(reason: string): void {
    if (this.kafkaProblem === reason) return;
    this.kafkaProblem = reason;
    this.update();
  }

  kafkaAnswered(): void {
    if (this.kafkaProblem === undefined) return;
    this.kafkaProblem = undefined;
    this.update();
  }

  /** kafkajs restarts the consumer by itself, as a new member that joins again. */
  restarting(error: unknown): void {
    this.isJoined = false;
    this.kafkaUnavailable(messageOf(error));
  }

  batchFailed(topic: string, partition: number, firstOffset: string, error: unknown): void {
    this.failingBatches.set(`${topic}\u0000${partition}`, { topic, partition, firstOffset, error });
    this.update();
  }

  /** True when the partition had been failing. */
  batchSucceeded(topic: string, partition: number): boolean {
    if (!this.failingBatches.delete(`${topic}\u0000${partition}`)) return false;
    this.update();
    return true;
  }

  failed(error: unknown): void {
    if (this.lifecycle === 'failed') return;
    this.lifecycle = 'failed';
    this.failure = error;
    this.update();
  }

  stopping(): void {
    if (this.lifecycle === 'stopped') return;
    this.lifecycle = 'stopping';
    this.update();
  }

  stopped(): void {
    this.lifecycle = 'stopped';
    this.update();
  }

  private compute(): KafkaConsumerStatus {
    switch (this.lifecycle) {
      case 'idle':
      case 'stopping':
      case 'stopped':
      case 'failed':
        return this.lifecycle;
      case 'starting':
      case 'running':
        if (this.kafkaProblem !== undefined) return 'kafka_unavailable';
        if (!this.isJoined) return this.lifecycle === 'starting' ? 'starting' : 'rejoining';
        if (this.failingBatches.size > 0) return 'handler_failing';
        return 'consuming';
    }
  }

  private notReadyReason(): string | undefined {
    switch (this.current) {
      case 'consuming':
        return undefined;
      case 'idle':
        return 'the Kafka consumer is not started';
      case 'starting':
        return 'joining the consumer group';
      case 'rejoining':
        return 'rejoining the consumer group';
      case 'kafka_unavailable':
        return `Kafka is unavailable: ${this.kafkaProblem ?? 'unknown error'}`;
      case 'handler_failing': {
        const [first] = this.failingBatches.values();
        return first
          ? `processing ${first.topic}[${first.partition}] fails, retrying: ${messageOf(first.error)}`
          : 'processing fails, retrying';
      }
      case 'stopping':
        return 'the Kafka consumer is stopping';
      case 'stopped':
        return 'the Kafka consumer is stopped';
      case 'failed':
        return `the Kafka consumer failed: ${messageOf(this.failure)}`;
    }
  }

  private update(): void {
    const status = this.compute();
    if (status === this.current) return;
    const previous = this.current;
    this.current = status;
    const context = { groupId: this.groupId, status, previous };
    switch (status) {
      case 'consuming':
        this.logger.info(
          { ...context, partitions: this.assigned },
          previous === 'starting' ? 'Kafka consumer joined its group' : 'Kafka consumer consuming again',
        );
        break;
      case 'kafka_unavailable':
        this.logger.warn(
          { ...context, reason: this.kafkaProblem },
          'Kafka unavailable; the consumer retries with back-off, nothing is committed meanwhile',
        );
        break;
      case 'handler_failing': {
        const [first] = this.failingBatches.values();
        this.logger.warn(
          {
            ...context,
            err: first?.error,
            topic: first?.topic,
            partition: first?.partition,
            firstOffset: first?.firstOffset,
          },
          'batch handler failing; retrying the same messages with back-off, nothing committed',
        );
        break;
      }
      case 'failed':
        this.logger.error({ ...context, err: this.failure }, 'Kafka consumer failed');
        break;
      case 'idle':
      case 'starting':
      case 'rejoining':
      case 'stopping':
      case 'stopped':
        this.logger.info(context, `Kafka consumer ${status}`);
        break;
    }
  }
}
