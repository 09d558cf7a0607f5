import type { Admin, Kafka } from 'kafkajs';

/**
 * How far ingestion has got, for the batch-export runs: a run reads its interval only once every
 * event captured before the interval's end (plus the export lag) is in storage, however far
 * ingestion lags behind (an outage, a backlog), so that lag delays runs instead of making them
 * miss events.
 */
export interface IngestionProgress {
  /**
   * True once ingestion has processed (written, dead-lettered or dropped) every event capture
   * received before `time`; otherwise why not yet. Rejects when it cannot tell (the queue is
   * unreachable): the caller asks again later.
   */
  processedUntil(time: Date): Promise<true | string>;
}

export interface KafkaIngestionProgressOptions {
  kafka: Kafka;
  /** The ingestion consumers' group. */
  groupId: string;
  /** The topics ingestion consumes. */
  topics: readonly string[];
  /**
   * How long after receiving an event capture may still be appending it to Kafka (its publish
   * deadline, with room for the client library's own retries). Default 30 s.
   */
  appendBoundMs?: number;
}

/**
 * Ingestion's progress read from Kafka: every event captured before `time` was appended before the
 * first message stamped `time + appendBound` (capture stamps a message when it sends it, right after
 * receiving the event, and gives up on it within its publish deadline). So once the group's
 * committed offset has passed that message's offset on every partition of every topic (or the
 * partition's end, when no message is that recent yet and `time + appendBound` is past), ingestion
 * has processed them all. Partitions that go quiet do not hold it back.
 */
export class KafkaIngestionProgress implements IngestionProgress {
  private admin: Promise<Admin> | undefined;
  private readonly appendBoundMs: number;

  constructor(private readonly options: KafkaIngestionProgressOptions) {
    this.appendBoundMs = options.appendBoundMs ?? 30_000;
  }

  async processedUntil(time: Date): Promise<true | string> {
    const bound = time.getTime() + this.appendBoundMs;
    if (Date.now() < bound) {
      return `events captured before ${time.toISOString()} may be appended to Kafka until ${new Date(bound).toISOString()}`;
    }
    const admin = await this.connect();
    try {
      let behind = 0n;
      for (const topic of this.options.topics) {
        const targets = await admin.fetchTopicOffsetsByTimestamp(topic, bound);
        const [committed] = await whileCoordinatorLoads(() =>
          admin.fetchOffsets({ groupId: this.options.groupId, topics: [topic] }),
        );
        // -1: the group has committed nothing there yet, which is the partition's start.
        const committedAt = new Map(
          (committed?.partitions ?? []).map(({ partition, offset }) => [partition, max(BigInt(offset), 0n)]),
        );
        for (const { partition, offset } of targets) {
          behind += max(BigInt(offset) - (committedAt.get(partition) ?? 0n), 0n);
        }
      }
      if (behind === 0n) return true;
      return `ingestion (group ${this.options.groupId}) has up to ${behind} messages left before ${time.toISOString()}`;
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    await admin?.then((connected) => connected.disconnect()).catch(() => undefined);
  }

  private connect(): Promise<Admin> {
    this.admin ??= (async () => {
      const admin = this.options.kafka.admin();
      await admin.connect();
      return admin;
    })();
    this.admin.catch(() => (this.admin = undefined));
    return this.admin;
  }
}

/** A group coordinator still loading its offsets (a broker just started) answers within seconds. */
const COORDINATOR_LOAD_WAIT_MS = 10_000;

/**
 * TRICKY: right after a broker starts, the group coordinator answers "the coordinator is loading"
 * (retriable) for a few seconds, and kafkajs's admin does not retry that one by itself.
 */
async function whileCoordinatorLoads<T>(request: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + COORDINATOR_LOAD_WAIT_MS;
  for (;;) {
    try {
      return await request();
    } catch (error) {
      const loading = (error as { type?: string }).type === 'GROUP_LOAD_IN_PROGRESS';
      if (!loading || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
