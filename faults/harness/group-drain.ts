import { EVENTS_TOPIC } from '@hogbase/event-contract';
import { createKafkaClient } from '@hogbase/queue';
import { eventually } from '@hogbase/test-support';

/**
 * Until `groupId` has committed the events topic's end on every partition: ingestion commits only
 * after both writes, so every acknowledged event is then stored.
 */
export async function waitForGroupDrained(
  brokers: string[],
  groupId: string,
  timeoutMs: number,
  describe: () => string = () => '',
): Promise<void> {
  const admin = createKafkaClient({ brokers, clientId: 'drain-check' }).admin();
  await admin.connect();
  try {
    let last = '';
    await eventually(
      `group ${groupId} to commit the events topic's end`,
      async () => {
        const ends = await admin.fetchTopicOffsets(EVENTS_TOPIC);
        const [committed] = await admin.fetchOffsets({ groupId, topics: [EVENTS_TOPIC] });
        const at = new Map(committed.partitions.map(({ partition, offset }) => [partition, BigInt(offset)]));
        const behind = ends.filter(
          ({ partition, high }) => BigInt(high) > 0n && (at.get(partition) ?? -1n) < BigInt(high),
        );
        last = `${JSON.stringify(behind)} vs ${JSON.stringify(committed.partitions)}`;
        return behind.length === 0;
      },
      { timeoutMs, intervalMs: 500, context: () => `${last}\n${describe()}` },
    );
  } finally {
    await admin.disconnect();
  }
}
