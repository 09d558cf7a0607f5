import { EVENTS_TOPIC, partitionKey } from '@hogbase/event-contract';
import {
  DEAD_LETTER_REASON_HEADER,
  DEAD_LETTER_TRUNCATED_HEADER,
  DEAD_LETTER_VALUE_BYTES_HEADER,
  KafkaEventPublisher,
  keyHash,
  type ConsumedMessage,
} from '@hogbase/queue';
import { randomUUID } from 'node:crypto';
import { waitForDeadLetter } from './harness/dead-letters';
import { LedgerSender } from './harness/ledger-sender';
import { partitionOffsets, type PartitionOffsets } from './harness/partition-offsets';
import { faultSuite, report, timeUntil, underLoad } from './harness/scenario';

/** About 1.04 MB: under the broker's limit (1 MiB), over what the producer takes (1,000,000 bytes). */
const POISON_BYTES = 1_040_000;
/** How long the partition fails: long enough for the others to go through several fetches. */
const FAILING_MS = 30_000;
const STUCK_LABEL = 'stuck';
/** The one distinct id whose writes Postgres refuses (LedgerSender names them `<label>-user-<n>`). */
const STUCK_DISTINCT_ID = `${STUCK_LABEL}-user-0`;

describe('one partition of the events topic in trouble under load', () => {
  const suite = faultSuite();
  const brokers = () => [suite.deployment.kafka.brokers];
  const offsets = () => partitionOffsets(brokers(), suite.deployment.groupId);

  it('a poison message larger than the dead-letter limit is dead-lettered as a bounded copy, and its partition moves on', async () => {
    const marker = `poison-${randomUUID()}`;
    let deadLetter: ConsumedMessage | undefined;
    const result = await underLoad(suite.deployment, 'poison', async () => {
      // Not JSON: ingestion can only dead-letter it, and its whole copy is over the producer's limit.
      const value = `{"${marker}": "${'x'.repeat(POISON_BYTES - marker.length - 6)}`;
      const producer = new KafkaEventPublisher({ brokers: brokers(), maxMessageBytes: 1_048_000 });
      try {
        await producer.publish(EVENTS_TOPIC, [
          { key: partitionKey(suite.deployment.project.id, marker), value },
        ]);
      } finally {
        await producer.close();
      }
      const published = Date.now();
      deadLetter = await waitForDeadLetter(
        brokers(),
        (message) => message.value.startsWith(`{"${marker}"`),
        120_000,
      );
      report(`poison: dead-lettered as a bounded copy ${Date.now() - published} ms after it was published`);
      await suite.deployment.ingestion.waitReady();
    });
    expect(deadLetter?.headers).toMatchObject({
      [DEAD_LETTER_TRUNCATED_HEADER]: 'true',
      [DEAD_LETTER_VALUE_BYTES_HEADER]: String(POISON_BYTES),
      [DEAD_LETTER_REASON_HEADER]: expect.stringMatching(/^invalid_json/) as unknown,
    });
    await suite.verify(result);
  });

  it('a partition that fails forever beside healthy ones: the others keep flowing, and it resumes once the failure stops', async () => {
    const projectId = suite.deployment.project.id;
    const partitions = (await offsets()).length;
    const stuck = keyHash(Buffer.from(partitionKey(projectId, STUCK_DISTINCT_ID))) % partitions;
    const stuckSender = new LedgerSender({
      captureUrl: suite.deployment.capture.url,
      apiKey: suite.deployment.project.apiKey,
      eventsPerSecond: 20,
      batchSize: 5,
      persons: 1,
      label: STUCK_LABEL,
    });
    let stuckResult: Awaited<ReturnType<LedgerSender['stop']>> | undefined;
    const result = await underLoad(suite.deployment, 'stuck-partition', async () => {
      // Postgres refuses every write of one person (as a bug or a broken index would): every batch
      // of its partition fails, again and again, while the other partitions' batches succeed.
      await refusePersonWrites(STUCK_DISTINCT_ID);
      stuckSender.start();
      try {
        const notReadyAfter = await timeUntil(
          'ingestion to report the failing partition (not ready)',
          async () => (await suite.deployment.ingestion.readiness()) === 503,
        );
        report(`stuck partition ${stuck}: ingestion not ready ${notReadyAfter} ms after the failure began`);
        // Every few seconds, the healthy partitions commit what was on them a moment before.
        const until = Date.now() + FAILING_MS;
        for (let round = 1; Date.now() < until; round++) {
          const before = await offsets();
          const caughtUp = await timeUntil(
            `the healthy partitions to commit what they held (round ${round})`,
            async () => healthyCaughtUp(before, await offsets(), stuck),
          );
          const held = await offsets();
          report(
            `stuck partition ${stuck}, round ${round}: the ${partitions - 1} others committed what they held within ${caughtUp} ms; ` +
              `${held[stuck].end - (held[stuck].committed < 0n ? 0n : held[stuck].committed)} messages held on partition ${stuck}`,
          );
          expect(held[stuck].committed).toBeLessThan(held[stuck].end);
          await new Promise((resolve) => setTimeout(resolve, 3_000));
        }
      } finally {
        await allowPersonWrites();
      }
      const healed = Date.now();
      const atHeal = await offsets();
      await timeUntil(
        `partition ${stuck} to commit what it held`,
        async () => (await offsets())[stuck].committed >= atHeal[stuck].end,
      );
      const drainedAfter = Date.now() - healed;
      await suite.deployment.ingestion.waitReady();
      report(
        `stuck partition ${stuck}: committed what it held ${drainedAfter} ms after the failure stopped; ingestion ready ${Date.now() - healed} ms after`,
      );
      stuckResult = await stuckSender.stop();
    }).finally(async () => {
      // A failed scenario must not leave the stuck person's sender running past the test.
      if (!stuckResult) await stuckSender.stop(1_000).catch(() => undefined);
    });
    if (!stuckResult) throw new Error('the stuck sender did not stop');
    report(`stuck-partition: ${stuckResult.acknowledged} events of the stuck person acknowledged`);
    await suite.verify({
      ledger: new Set([...result.ledger, ...stuckSender.ledger]),
      distinctIds: [...result.distinctIds, ...stuckResult.distinctIds],
    });
  });

  /** True once every partition but `stuck` has committed at least its end of `before`. */
  function healthyCaughtUp(before: PartitionOffsets[], now: PartitionOffsets[], stuck: number): boolean {
    return now.every(({ partition, committed }) => partition === stuck || committed >= before[partition].end);
  }

  async function refusePersonWrites(distinctId: string): Promise<void> {
    const { postgres } = suite.deployment;
    await postgres.superuser(`
      CREATE FUNCTION faults_refuse_person() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM person_distinct_ids WHERE person_id = NEW.id AND distinct_id = '${distinctId}') THEN
          RAISE EXCEPTION 'fault suite: writes of this person fail';
        END IF;
        RETURN NEW;
      END $$`);
    await postgres.superuser(`
      CREATE FUNCTION faults_refuse_distinct_id() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.distinct_id = '${distinctId}' THEN
          RAISE EXCEPTION 'fault suite: writes of this person fail';
        END IF;
        RETURN NEW;
      END $$`);
    await postgres.superuser(`CREATE TRIGGER faults_refuse_person BEFORE INSERT OR UPDATE ON persons
      FOR EACH ROW EXECUTE FUNCTION faults_refuse_person()`);
    await postgres.superuser(`CREATE TRIGGER faults_refuse_distinct_id BEFORE INSERT OR UPDATE ON person_distinct_ids
      FOR EACH ROW EXECUTE FUNCTION faults_refuse_distinct_id()`);
  }

  async function allowPersonWrites(): Promise<void> {
    const { postgres } = suite.deployment;
    await postgres.superuser('DROP TRIGGER IF EXISTS faults_refuse_person ON persons');
    await postgres.superuser('DROP TRIGGER IF EXISTS faults_refuse_distinct_id ON person_distinct_ids');
    await postgres.superuser('DROP FUNCTION IF EXISTS faults_refuse_person()');
    await postgres.superuser('DROP FUNCTION IF EXISTS faults_refuse_distinct_id()');
  }
});
