import { pino } from 'pino';
import type { QueueMessage } from '@hogbase/event-contract';
import { KafkaEventConsumer, type KafkaConsumerOptions } from './kafka.consumer';
import { KafkaEventPublisher } from './kafka.publisher';
import { keyHash } from './murmur2.util';
import type { BatchHandler } from './queue.types';
import {
  capturingLogger,
  committedOffsets,
  createTopic,
  messageCount,
  settledWithin,
  testBrokers,
  uniqueName,
  waitFor,
} from './testing/kafka-test.util';

const logger = pino({ level: 'silent' });

function sequenced(key: string, sequence: number): QueueMessage {
  return { key, value: JSON.stringify({ key, sequence }), headers: { sequence: String(sequence) } };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `perPartition` keys for each of the topic's partitions (Kafka's default partitioner). */
function keysByPartition(partitions: number, perPartition: number): string[][] {
  const keys: string[][] = Array.from({ length: partitions }, () => []);
  for (let index = 0; keys.some((list) => list.length < perPartition); index++) {
    const key = `team:person-${index}`;
    const list = keys[keyHash(Buffer.from(key)) % partitions];
    if (list.length < perPartition) list.push(key);
  }
  return keys;
}

describe('KafkaEventConsumer', () => {
  let brokers: string[];
  let publisher: KafkaEventPublisher;
  const consumers: KafkaEventConsumer[] = [];

  beforeAll(() => {
    brokers = testBrokers();
    publisher = new KafkaEventPublisher({ brokers, logger });
  });

  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((consumer) => consumer.stop()));
  });

  afterAll(async () => {
    await publisher.close();
  });

  function startConsumer(
    topic: string,
    groupId: string,
    handler: BatchHandler,
    options: Partial<KafkaConsumerOptions> = {},
  ): { consumer: KafkaEventConsumer; started: Promise<void> } {
    const consumer = new KafkaEventConsumer({
      brokers,
      logger,
      groupId,
      topics: [topic],
      retryInitialMs: 50,
      maxWaitTimeMs: 200,
      ...options,
    });
    consumers.push(consumer);
    return { consumer, started: consumer.start(handler) };
  }

  it('delivers every acknowledged message, in publish order per key, across partitions', async () => {
    const topic = await createTopic(brokers, 'order', 4);
    const keys = Array.from({ length: 12 }, (_, index) => `team:person-${index}`);
    for (let round = 0; round < 5; round++) {
      const messages: QueueMessage[] = [];
      for (let sequence = round * 4; sequence < round * 4 + 4; sequence++) {
        for (const key of keys) messages.push(sequenced(key, sequence));
      }
      await publisher.publish(topic, messages);
    }
    // publish resolved: the broker has every message.
    expect(await messageCount(brokers, topic)).toBe(240);

    const seen = new Map<string, number[]>();
    const partitionsOfKey = new Map<string, Set<number>>();
    const { consumer, started } = startConsumer(topic, uniqueName('order'), async (batch) => {
      for (const consumed of batch.messages) {
        const { key, sequence } = JSON.parse(consumed.value) as { key: string; sequence: number };
        expect(consumed.key).toBe(key);
        expect(consumed.headers.sequence).toBe(String(sequence));
        seen.set(key, [...(seen.get(key) ?? []), sequence]);
        partitionsOfKey.set(key, (partitionsOfKey.get(key) ?? new Set()).add(batch.partition));
      }
      await Promise.resolve();
    });
    await started;
    // start() resolved on the group join itself, not before.
    expect(consumer.healthy()).toBe(true);
    expect(consumer.ready()).toEqual({ ready: true });
    expect(consumer.assignment()).toEqual({ [topic]: [0, 1, 2, 3] });
    await waitFor(
      () => [...seen.values()].reduce((sum, list) => sum + list.length, 0) >= 240,
      '240 messages',
    );

    for (const key of keys) expect(seen.get(key)).toEqual([...Array(20).keys()]);
    // Each key lives in one partition, and the keys are spread over several.
    expect([...partitionsOfKey.values()].every((partitions) => partitions.size === 1)).toBe(true);
    expect(
      new Set([...partitionsOfKey.values()].map((partitions) => [...partitions][0])).size,
    ).toBeGreaterThan(1);

    await consumer.stop();
    expect(consumer.healthy()).toBe(false);
    expect(consumer.ready()).toEqual({ ready: false, reason: 'the Kafka consumer is stopped' });
  });

  it('is not ready while the handler fails, logs that once however many retries, and is ready again after', async () => {
    const topic = await createTopic(brokers, 'ready', 1);
    await publisher.publish(
      topic,
      Array.from({ length: 5 }, (_, sequence) => sequenced('k', sequence)),
    );
    const log = capturingLogger();
    let failures = 0;
    let healed = false;
    const processed: string[] = [];
    const { consumer, started } = startConsumer(
      topic,
      uniqueName('ready'),
      async (batch) => {
        if (!healed) {
          failures += 1;
          throw new Error('Postgres is down');
        }
        processed.push(...batch.messages.map((consumed) => consumed.offset));
        await Promise.resolve();
      },
      { logger: log, retryInitialMs: 20, retryMaxMs: 50 },
    );
    await started;
    await waitFor(() => failures >= 5, 'five failed attempts');
    const whileFailing = { ready: consumer.ready(), healthy: consumer.healthy() };
    healed = true;
    await waitFor(() => processed.length >= 5, 'the batch once the handler works');

    expect(whileFailing).toEqual({
      ready: { ready: false, reason: expect.stringMatching(/fails, retrying: Postgres is down/) as unknown },
      // Not a reason to restart the process.
      healthy: true,
    });
    expect(consumer.ready()).toEqual({ ready: true });
    const statusLines = log.lines
      .filter((line) => line.level !== 'debug')
      .map((line) => `${line.level} ${String(line.fields.status)}`);
    expect(statusLines).toEqual([
      'info starting',
      'info consuming',
      'warn handler_failing',
      'info consuming',
    ]);
    // Every retry is still there for whoever turns debug on.
    const retries = log.lines.filter((line) => line.message.startsWith('batch handler failed'));
    expect(retries.length).toBeGreaterThanOrEqual(5);
  });

  it('gives a restarted consumer of the group its partitions at once: a stopped consumer leaves the group', async () => {
    const topic = await createTopic(brokers, 'rejoin', 2);
    const groupId = uniqueName('rejoin');
    // A long session: had the first consumer not left the group, the second would wait a minute for it.
    const options = { sessionTimeoutMs: 60_000, rebalanceTimeoutMs: 60_000 };
    const first = startConsumer(topic, groupId, () => Promise.resolve(), options);
    await first.started;
    expect(first.consumer.assignment()).toEqual({ [topic]: [0, 1] });
    await first.consumer.stop();

    const second = startConsumer(topic, groupId, () => Promise.resolve(), options);
    expect((await settledWithin(second.started, 15_000)).state).toBe('resolved');
    expect(second.consumer.assignment()).toEqual({ [topic]: [0, 1] });
    expect(second.consumer.ready()).toEqual({ ready: true });
  });

  it('joins a rebalance at once while it retries a failing batch: it heartbeats through the back-off', async () => {
    const topic = await createTopic(brokers, 'handover', 2);
    const groupId = uniqueName('handover');
    await publisher.publish(
      topic,
      Array.from({ length: 20 }, (_, sequence) => sequenced(`k${sequence % 8}`, sequence)),
    );
    // A back-off and timeouts far beyond the deadline below: only a heartbeat during the
    // back-off, which learns of the rebalance, lets the retrying member rejoin in time.
    const slow = {
      retryInitialMs: 60_000,
      retryMaxMs: 60_000,
      sessionTimeoutMs: 60_000,
      rebalanceTimeoutMs: 60_000,
    };
    let attempts = 0;
    const retrying = startConsumer(
      topic,
      groupId,
      () => {
        attempts += 1;
        return Promise.reject(new Error('ClickHouse is down'));
      },
      slow,
    );
    await retrying.started;
    await waitFor(() => attempts >= 1, 'a failed attempt');

    const received: string[] = [];
    const joining = startConsumer(
      topic,
      groupId,
      async (batch) => {
        received.push(...batch.messages.map((consumed) => consumed.offset));
        await Promise.resolve();
      },
      slow,
    );
    expect((await settledWithin(joining.started, 20_000)).state).toBe('resolved');
    const [taken] = joining.consumer.assignment()[topic];
    await waitFor(
      () => retrying.consumer.assignment()[topic]?.length === 1,
      'the retrying member to rejoin with one partition',
    );
    expect(retrying.consumer.assignment()).toEqual({ [topic]: [1 - taken] });
    // The new member reads its partition from the start: nothing that failed was committed (the
    // fixed keys put messages on both partitions).
    await waitFor(() => received.length > 0 && received[0] === '0', "the new member's first message");
  });

  it('commits nothing while the handler fails and gives it the same messages again', async () => {
    const topic = await createTopic(brokers, 'retry', 1);
    const groupId = uniqueName('retry');
    await publisher.publish(
      topic,
      Array.from({ length: 10 }, (_, sequence) => sequenced('k', sequence)),
    );

    const attempts: string[][] = [];
    const committedDuringRetry: Record<number, number>[] = [];
    const processed: string[] = [];
    const { started } = startConsumer(topic, groupId, async (batch) => {
      attempts.push(batch.messages.map((consumed) => consumed.offset));
      if (attempts.length === 1) throw new Error('ClickHouse is down');
      committedDuringRetry.push(await committedOffsets(brokers, groupId, topic));
      processed.push(...batch.messages.map((consumed) => consumed.offset));
    });
    await started;
    await waitFor(() => processed.length >= 10, 'the retried batch to be processed');

    expect(attempts[1]).toEqual(attempts[0]);
    expect(attempts[0][0]).toBe('0');
    // When the retry ran, the failed attempt had committed nothing.
    expect(committedDuringRetry[0]).toEqual({ 0: -1 });
    expect(processed).toEqual([...Array(10).keys()].map(String));
    // Once it succeeded, the batch is committed.
    let committed = -1;
    for (const deadline = Date.now() + 10_000; committed !== 10 && Date.now() < deadline; await sleep(50)) {
      committed = (await committedOffsets(brokers, groupId, topic))[0];
    }
    expect(committed).toBe(10);
  });

  it('on stop() finishes the batch in flight, commits it, and a restart continues from there', async () => {
    const topic = await createTopic(brokers, 'stop', 1);
    const groupId = uniqueName('stop');
    await publisher.publish(
      topic,
      Array.from({ length: 30 }, (_, sequence) => sequenced('k', sequence)),
    );

    const firstRun: string[] = [];
    let calls = 0;
    let stopping: Promise<void> | undefined;
    let inFlightFinished = false;
    const first = startConsumer(
      topic,
      groupId,
      async (batch) => {
        calls += 1;
        if (calls === 2) {
          // Stop while this batch is being processed; the batch must still complete and commit.
          stopping = first.consumer.stop();
          await sleep(300);
          inFlightFinished = true;
        }
        firstRun.push(...batch.messages.map((consumed) => consumed.offset));
      },
      { maxBatchSize: 10 },
    );
    await first.started;
    await waitFor(() => stopping !== undefined, 'the second batch');
    await stopping;

    expect(inFlightFinished).toBe(true);
    expect(firstRun.length).toBeLessThan(30);
    // Exactly what was processed is committed.
    expect(await committedOffsets(brokers, groupId, topic)).toEqual({ 0: firstRun.length });

    const secondRun: string[] = [];
    const second = startConsumer(topic, groupId, async (batch) => {
      secondRun.push(...batch.messages.map((consumed) => consumed.offset));
      await Promise.resolve();
    });
    await second.started;
    await waitFor(() => firstRun.length + secondRun.length >= 30, 'the rest of the messages');
    await sleep(300); // anything redelivered by mistake would arrive now

    expect([...firstRun, ...secondRun]).toEqual([...Array(30).keys()].map(String));
  });

  it("keeps consuming the other partitions while one partition's batch fails, and that one resumes where it stopped", async () => {
    const partitions = 4;
    const topic = await createTopic(brokers, 'stuck', partitions);
    const groupId = uniqueName('stuck');
    const keys = keysByPartition(partitions, 2);
    const stuck = 2;
    let sequence = 0;
    const publishRound = async (perKey: number) => {
      const round: QueueMessage[] = [];
      for (let index = 0; index < perKey; index++, sequence++) {
        for (const key of keys.flat()) round.push(sequenced(key, sequence));
      }
      await publisher.publish(topic, round);
    };
    let failing = true;
    let failedAttempts = 0;
    // What the successful handler calls saw, per partition: each offset must be there once, in order.
    const processed = new Map<number, number[]>();
    const processedCount = (partition: number) => processed.get(partition)?.length ?? 0;
    const log = capturingLogger();
    const { consumer, started } = startConsumer(
      topic,
      groupId,
      async (batch) => {
        if (batch.partition === stuck && failing) {
          failedAttempts += 1;
          throw new Error('this partition fails');
        }
        const offsets = processed.get(batch.partition) ?? [];
        offsets.push(...batch.messages.map((consumed) => Number(consumed.offset)));
        processed.set(batch.partition, offsets);
        await Promise.resolve();
      },
      {
        logger: log,
        retryInitialMs: 50,
        retryMaxMs: 200,
        partitionsConsumedConcurrently: 2,
        maxBatchSize: 7,
      },
    );
    await started;
    const healthy = [...Array(partitions).keys()].filter((partition) => partition !== stuck);

    // Each key gets 10 messages per round: 20 per partition.
    await publishRound(10);
    await waitFor(() => healthy.every((partition) => processedCount(partition) === 20), 'the first round');
    // Published while the stuck partition retries: the others must still fetch and process it.
    await publishRound(10);
    await waitFor(
      () => healthy.every((partition) => processedCount(partition) === 40),
      'the second round on the healthy partitions while one partition fails',
    );
    await waitFor(async () => {
      const committed = await committedOffsets(brokers, groupId, topic);
      return healthy.every((partition) => committed[partition] === 40);
    }, 'the healthy partitions committed');
    await waitFor(() => failedAttempts >= 3, 'the failing partition to be retried');
    expect((await committedOffsets(brokers, groupId, topic))[stuck]).toBe(-1);
    expect(consumer.ready()).toEqual({
      ready: false,
      reason: expect.stringMatching(
        new RegExp(`\\[${stuck}\\] fails, retrying: this partition fails`),
      ) as unknown,
    });

    failing = false;
    await waitFor(async () => {
      const committed = await committedOffsets(brokers, groupId, topic);
      return [...Array(partitions).keys()].every((partition) => committed[partition] === 40);
    }, 'every partition committed once the failure stopped');
    await sleep(300); // anything delivered twice by mistake would arrive now
    for (let partition = 0; partition < partitions; partition++) {
      expect(processed.get(partition)).toEqual([...Array(40).keys()]);
    }
    expect(consumer.ready()).toEqual({ ready: true });
  });

  it('fails to start with a clear error when the topic does not exist', async () => {
    const consumer = new KafkaEventConsumer({
      brokers,
      logger,
      groupId: uniqueName('missing'),
      topics: [uniqueName('missing-topic')],
    });
    consumers.push(consumer);
    await expect(consumer.start(() => Promise.resolve())).rejects.toThrow(/cannot start consuming/);
    expect(consumer.healthy()).toBe(false);
    expect(consumer.ready()).toEqual({
      ready: false,
      reason: expect.stringMatching(/failed: cannot start consuming/) as unknown,
    });
  });
});
