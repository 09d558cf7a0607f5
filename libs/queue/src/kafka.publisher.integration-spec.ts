import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { QueueMessage } from '@hogbase/event-contract';
import { KafkaEventPublisher } from './kafka.publisher';
import { ensureTopics } from './kafka-topics.util';
import { MessageTooLargeError, QueueUnavailableError } from './queue.errors';
import {
  capturingLogger,
  createTopic,
  messageCount,
  settledWithin,
  startThrowawayBroker,
  testBrokers,
  uniqueName,
  waitFor,
} from './testing/kafka-test.util';

const logger = pino({ level: 'silent' });

/** Publishes until the broker takes it (it may need a moment to elect the partition's leader). */
async function waitForPublish(publisher: KafkaEventPublisher, topic: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await publisher.publish(topic, [message('k', 'after the outage')]);
    } catch (error) {
      if (!(error instanceof QueueUnavailableError) || Date.now() > deadline) throw error;
    }
  }
}

/** Waits until Linux reports the process in `state` (`T`: stopped by a signal). */
async function waitForProcessState(pid: number, state: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    // /proc/<pid>/stat: "pid (comm) state ...", comm may hold spaces, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith(state)) return;
    if (Date.now() > deadline) throw new Error(`process ${pid} is not in state ${state}: ${stat}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function message(key: string, value: string): QueueMessage {
  return { key, value, headers: { kind: 'test' } };
}

describe('KafkaEventPublisher', () => {
  let brokers: string[];
  beforeAll(() => {
    brokers = testBrokers();
  });

  it('refuses a message over maxMessageBytes before sending anything', async () => {
    const topic = await createTopic(brokers, 'too-large-client');
    const publisher = new KafkaEventPublisher({ brokers, logger, maxMessageBytes: 10_000 });
    try {
      const error = await publisher
        .publish(topic, [message('k', 'x'.repeat(20_000))])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MessageTooLargeError);
      expect((error as MessageTooLargeError).maxBytes).toBe(10_000);
    } finally {
      await publisher.close();
    }
  });

  it('maps the broker refusing a message as too large to MessageTooLargeError', async () => {
    const topic = await createTopic(brokers, 'too-large-broker');
    // The client-side limit is raised so that the broker's own limit (message.max.bytes, 1 MiB) decides.
    const publisher = new KafkaEventPublisher({ brokers, logger, maxMessageBytes: 10_000_000 });
    try {
      await expect(publisher.publish(topic, [message('k', 'x'.repeat(2_000_000))])).rejects.toBeInstanceOf(
        MessageTooLargeError,
      );
      // The publisher still works for normal messages afterwards.
      await expect(publisher.publish(topic, [message('k', 'small')])).resolves.toBeUndefined();
    } finally {
      await publisher.close();
    }
  });

  it('sends a publish bigger than one request as several requests, all acknowledged', async () => {
    const topic = await createTopic(brokers, 'chunked');
    const publisher = new KafkaEventPublisher({ brokers, logger });
    try {
      // 3,000 messages of ~1 KB: about 3 MB, over the broker's 1 MiB per request.
      const messages = Array.from({ length: 3_000 }, (_, index) =>
        message(`k${index % 7}`, 'v'.repeat(1_000)),
      );
      await publisher.publish(topic, messages);
    } finally {
      await publisher.close();
    }
    expect(await messageCount(brokers, topic)).toBe(3_000);
  });

  it('publishes with the idempotent producer when asked', async () => {
    const topic = await createTopic(brokers, 'idempotent', 2);
    const publisher = new KafkaEventPublisher({ brokers, logger, idempotent: true });
    try {
      await publisher.publish(topic, [message('a', '1'), message('b', '2')]);
      await publisher.publish(topic, [message('a', '3')]);
    } finally {
      await publisher.close();
    }
    expect(await messageCount(brokers, topic)).toBe(3);
  });

  it('rejects with QueueUnavailableError within the timeout while the broker is stopped, is not ready, and recovers by itself', async () => {
    const logDir = mkdtempSync(path.join(tmpdir(), 'queue-outage-'));
    let broker = await startThrowawayBroker({ logDir });
    const ownBrokers = [broker.brokers];
    const timeoutMs = 4_000;
    const log = capturingLogger();
    const publisher = new KafkaEventPublisher({ brokers: ownBrokers, logger: log, timeoutMs });
    try {
      const [{ name: topic }] = await ensureTopics(ownBrokers, [
        { name: uniqueName('outage'), partitions: 1, replicationFactor: 1 },
      ]);
      expect(publisher.ready()).toEqual({ ready: false, reason: 'connecting to Kafka' });
      await waitFor(() => publisher.ready().ready, 'the publisher to connect');
      await publisher.publish(topic, [message('k', 'before the outage')]);
      await broker.stop();

      const started = Date.now();
      const error = await publisher
        .publish(topic, [message('k', 'during the outage')])
        .catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(error).toBeInstanceOf(QueueUnavailableError);
      // Bounded by the publish timeout (plus scheduling slack), not by kafkajs's own minute of retries.
      expect(elapsed).toBeLessThan(timeoutMs + 2_000);

      expect(publisher.ready()).toEqual({
        ready: false,
        reason: expect.stringMatching(/^Kafka is unavailable: /) as unknown,
      });
      // A second failure is no news: still one line.
      await publisher.publish(topic, [message('k', 'during the outage')]).catch(() => undefined);

      // Same address, same data: ready again without any publish to prove it (a capture taken
      // out of rotation gets none), and the same publisher works again.
      broker = await startThrowawayBroker({
        port: broker.port,
        controllerPort: broker.controllerPort,
        logDir,
      });
      await waitFor(() => publisher.ready().ready, 'the publisher to be ready again', 60_000);
      await waitForPublish(publisher, topic);
      expect(await messageCount(ownBrokers, topic)).toBeGreaterThanOrEqual(2);
      expect(log.lines.filter((line) => line.level !== 'debug').map((line) => line.message)).toEqual([
        'Kafka unavailable: publishes fail (503) until it answers again',
        'Kafka available again: publishing',
      ]);
    } finally {
      await publisher.close();
      await broker.stop();
      rmSync(logDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('rejects with QueueUnavailableError when no broker was ever reachable', async () => {
    const publisher = new KafkaEventPublisher({ brokers: ['127.0.0.1:1'], logger, timeoutMs: 3_000 });
    try {
      await expect(publisher.publish('nowhere', [message('k', 'v')])).rejects.toBeInstanceOf(
        QueueUnavailableError,
      );
    } finally {
      await publisher.close();
    }
  });

  it('closes within its bound while the broker does not answer, and the publish in flight fails rather than succeeds', async () => {
    const broker = await startThrowawayBroker();
    const ownBrokers = [broker.brokers];
    const publisher = new KafkaEventPublisher({
      brokers: ownBrokers,
      logger,
      timeoutMs: 3_000,
      closeTimeoutMs: 2_000,
    });
    try {
      const [{ name: topic }] = await ensureTopics(ownBrokers, [
        { name: uniqueName('unresponsive'), partitions: 1, replicationFactor: 1 },
      ]);
      await publisher.publish(topic, [message('k', 'before')]);
      process.kill(broker.pid, 'SIGSTOP');
      // The signal is delivered asynchronously: until the JVM is really stopped it may still
      // acknowledge (and then the publish rightly succeeds). Publish only once it is frozen.
      await waitForProcessState(broker.pid, 'T');
      try {
        const inFlight = publisher.publish(topic, [message('k', 'unanswered')]);
        const closed = await settledWithin(publisher.close(), 2_000 + 2_000 + 3_000);
        expect(closed.state).toBe('resolved');
        await expect(inFlight).rejects.toBeInstanceOf(QueueUnavailableError);
        expect(publisher.ready()).toEqual({ ready: false, reason: 'the Kafka publisher is closed' });
      } finally {
        // TRICKY: not SIGCONT. A resumed broker would answer the request kafkajs abandoned at
        // close(), and kafkajs would go on refreshing metadata after this file is torn down. Killed,
        // its sockets close and kafkajs's bounded retries end at once on refused connections.
        process.kill(broker.pid, 'SIGKILL');
      }
    } finally {
      await publisher.close();
      await broker.stop();
    }
  }, 60_000);

  it('refuses publishes after close()', async () => {
    const publisher = new KafkaEventPublisher({ brokers, logger });
    await publisher.close();
    await expect(publisher.publish('any', [message('k', 'v')])).rejects.toBeInstanceOf(QueueUnavailableError);
  });
});
