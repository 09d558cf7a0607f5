import { EVENTS_TOPIC } from '@hogbase/event-contract';
import { createKafkaClient } from '@hogbase/queue';

export interface PartitionOffsets {
  partition: number;
  /** The offset of its next message. */
  end: bigint;
  /** -1: nothing yet. */
  committed: bigint;
}

export async function partitionOffsets(brokers: string[], groupId: string): Promise<PartitionOffsets[]> {
  const admin = createKafkaClient({ brokers, clientId: 'partition-offsets' }, { quiet: true }).admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(EVENTS_TOPIC);
    const [committed] = await admin.fetchOffsets({ groupId, topics: [EVENTS_TOPIC] });
    const at = new Map(committed.partitions.map(({ partition, offset }) => [partition, BigInt(offset)]));
    return ends
      .map(({ partition, high }) => ({ partition, end: BigInt(high), committed: at.get(partition) ?? -1n }))
      .sort((left, right) => left.partition - right.partition);
  } finally {
    await admin.disconnect();
  }
}
