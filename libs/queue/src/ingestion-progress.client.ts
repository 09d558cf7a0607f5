import type { Admin, Kafka } from 'kafkajs';

/** Batch-export runs wait on this, so that ingestion lag delays a run instead of making it miss events. */
export interface IngestionProgress {
  /** True once every event captured before `time` is processed, else why not; rejects when it cannot tell. */
  processedUntil(time: Date): Promise<true | string>;
}

export interface KafkaIngestionProgressOptions {
  kafka: Kafka;
  groupId: string;
  topics: readonly string[];
  /** Capture's publish deadline plus the client's own retries. */
  appendBoundMs?: number;
}

/**
 * Every event captured before `time` was appended before the first message stamped `time + appendBound`
 * (capture stamps on send and gives up within its deadline): once the group's committed offsets pass
 * that message (or the partition's end) on every partition, all were processed.
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
        // -1: nothing committed there yet, which is the partition's start.
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

const COORDINATOR_LOAD_WAIT_MS = 10_000;

/** TRICKY: a just-started broker's coordinator answers "loading" for seconds; kafkajs's admin does not retry it. */
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
