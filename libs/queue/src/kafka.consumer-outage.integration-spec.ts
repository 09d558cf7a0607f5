import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { QueueMessage } from '@hogbase/event-contract';
import { settlesWithin } from './deadline.util';
import { KafkaEventConsumer, type KafkaConsumerOptions } from './kafka.consumer';
import { KafkaEventPublisher } from './kafka.publisher';
import { ensureTopics } from './kafka-topics.util';
import { QueueUnavailableError } from './queue.errors';
import type { BatchHandler } from './queue.types';
import {
  capturingLogger,
  committedOffsets,
  settledWithin,
  startThrowawayBroker,
  uniqueName,
  waitFor,
  type KafkaBrokerHandle,
  type LoggedLine,
} from './testing/kafka-test.util';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function messages(count: number, from = 0): QueueMessage[] {
  return Array.from({ length: count }, (_, index) => ({
    key: `k${(from + index) % 4}`,
    value: String(from + index),
  }));
}

/** What an operator reads at the default level: the status lines. */
function statusLines(lines: LoggedLine[]): string[] {
  return lines
    .filter((line) => line.level !== 'debug')
    .map((line) => `${line.level} ${String(line.fields.status)}`);
}

/**
 * A broker of the test's own, stopped and started again on the same ports and data. The consumer
 * must wait it out by itself: no crash, no restart churn, one log line per change of status.
 */
describe('KafkaEventConsumer when the broker goes away', () => {
  let logDir: string;
  let broker: KafkaBrokerHandle;
  let brokers: string[];
  let topic: string;
  const consumers: KafkaEventConsumer[] = [];

  beforeEach(async () => {
    logDir = mkdtempSync(path.join(tmpdir(), 'queue-consumer-outage-'));
    broker = await startThrowawayBroker({ logDir });
    brokers = [broker.brokers];
    [{ name: topic }] = await ensureTopics(brokers, [
      { name: uniqueName('outage'), partitions: 2, replicationFactor: 1 },
    ]);
  });

  afterEach(async () => {
    const stopped = consumers.splice(0);
    await Promise.all(stopped.map((consumer) => consumer.stop()));
    // NOTE: a stop bounded while the broker was down leaves kafkajs leaving its group; its late
    // requests load modules, which Jest refuses once the file's environment is torn down.
    await settlesWithin(Promise.all(stopped.map((consumer) => consumer.whenKafkajsStopped())), 30_000);
    await broker.stop();
    rmSync(logDir, { recursive: true, force: true });
  });

  async function restartBroker(): Promise<void> {
    broker = await startThrowawayBroker({ port: broker.port, controllerPort: broker.controllerPort, logDir });
  }

  async function publish(batch: QueueMessage[]): Promise<void> {
    const publisher = new KafkaEventPublisher({ brokers });
    try {
      await publisher.publish(topic, batch);
    } finally {
      await publisher.close();
    }
  }

  function consumer(handler: BatchHandler, options: Partial<KafkaConsumerOptions> = {}) {
    const created = new KafkaEventConsumer({
      brokers,
      groupId: uniqueName('outage'),
      topics: [topic],
      maxWaitTimeMs: 200,
      ...options,
    });
    consumers.push(created);
    return { consumer: created, started: created.start(handler) };
  }

  it('waits out a broker outage as the same member: not ready meanwhile, one line per change, then consuming again with nothing lost or twice', async () => {
    await publish(messages(10));
    const log = capturingLogger();
    const seen: string[] = [];
    const { consumer: outageConsumer, started } = consumer(
      async (batch) => {
        seen.push(...batch.messages.map((message) => `${batch.partition}:${message.offset}`));
        await Promise.resolve();
      },
      { logger: log, groupId: 'outage-group' },
    );
    await started;
    await waitFor(() => seen.length >= 10, 'the first ten messages');
    await waitFor(
      async () =>
        Object.values(await committedOffsets(brokers, 'outage-group', topic)).reduce(
          (sum, offset) => sum + Math.max(0, offset),
          0,
        ) === 10,
      'their offsets committed',
    );
    const before = log.lines.length;

    await broker.stop();
    await waitFor(() => !outageConsumer.ready().ready, 'the consumer to notice');
    expect(outageConsumer.ready().reason).toMatch(/^Kafka is unavailable: /);
    // Waiting for Kafka is not a reason to restart the process.
    expect(outageConsumer.healthy()).toBe(true);
    await sleep(8_000);
    await restartBroker();
    await waitFor(() => outageConsumer.ready().ready, 'the consumer to be ready again', 60_000);
    await publish(messages(10, 10));
    await waitFor(() => seen.length >= 20, 'the ten messages published after the outage');
    await sleep(500); // anything delivered twice would arrive now

    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(20);
    const during = log.lines.slice(before);
    const lines = statusLines(during);
    expect(lines[0]).toBe('warn kafka_unavailable');
    expect(lines[lines.length - 1]).toBe('info consuming');
    expect(lines.length).toBeLessThanOrEqual(3);
    // kafkajs tried again and again meanwhile; those attempts are debug lines, not warnings.
    const attempts = during.filter((line) => line.level === 'debug' && /ECONNREFUSED/.test(line.message));
    expect(attempts.length).toBeGreaterThanOrEqual(5);
    // Never crashed and restarted (which would have made it a new member of the group).
    const crashes = during
      .filter((line) => /Crash|Restarting the consumer/.test(line.message))
      .map((line) => `${line.message} ${JSON.stringify(line.fields)}`);
    expect(crashes).toEqual([]);
  }, 120_000);

  it('starts while the broker is down, says why it is not ready, and resolves start() once it has joined', async () => {
    await broker.stop();
    const { consumer: waiting, started } = consumer(() => Promise.resolve());
    await waitFor(() => /^Kafka is unavailable: /.test(waiting.ready().reason ?? ''), 'the reason');
    expect((await settledWithin(started, 1_000)).state).toBe('pending');

    await restartBroker();
    expect((await settledWithin(started, 60_000)).state).toBe('resolved');
    expect(waiting.ready()).toEqual({ ready: true });
    expect(waiting.assignment()).toEqual({ [topic]: [0, 1] });
  }, 120_000);

  it('stops within its bound while the broker is stopped, and a start still waiting rejects', async () => {
    // Few reconnect attempts: kafkajs's retries left running after stop() end soon (in a real
    // process, exit ends them).
    const options = { stopTimeoutMs: 3_000, reconnectAttempts: 2 };
    const joined = consumer(() => Promise.resolve(), options);
    await joined.started;
    await broker.stop();
    const waiting = consumer(() => Promise.resolve(), options);
    const waitingStart = settledWithin(waiting.started, 15_000);

    expect((await settledWithin(joined.consumer.stop(), 3_000 + 5_000)).state).toBe('resolved');
    expect((await settledWithin(waiting.consumer.stop(), 3_000 + 5_000)).state).toBe('resolved');
    const outcome = await waitingStart;
    expect(outcome.state).toBe('rejected');
    expect(outcome.state === 'rejected' && outcome.error).toBeInstanceOf(QueueUnavailableError);
    expect(joined.consumer.healthy()).toBe(false);
  }, 60_000);

  it('stops within its bound while the broker does not answer', async () => {
    const joined = consumer(() => Promise.resolve(), { stopTimeoutMs: 3_000 });
    await joined.started;
    process.kill(broker.pid, 'SIGSTOP');
    try {
      expect((await settledWithin(joined.consumer.stop(), 3_000 + 5_000)).state).toBe('resolved');
    } finally {
      process.kill(broker.pid, 'SIGCONT');
    }
  }, 60_000);
});
