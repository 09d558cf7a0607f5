import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { ensureTopics } from '../kafka-topics.util';
import type { QueueLogger } from '../queue-logger.util';

export function testBrokers(): string[] {
  const brokers = process.env.KAFKA_BROKERS;
  if (!brokers) {
    throw new Error(
      'KAFKA_BROKERS is not set: the queue integration tests need a real Kafka broker. Run them through ' +
        '`npm test -- --projects=queue` (it starts one), or set KAFKA_BROKERS=host:port.',
    );
  }
  return brokers
    .split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
}

export function uniqueName(prefix: string): string {
  return `test-${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
}

export async function createTopic(brokers: string[], prefix: string, partitions = 1): Promise<string> {
  const name = uniqueName(prefix);
  await ensureTopics(brokers, [{ name, partitions, replicationFactor: 1 }]);
  return name;
}

function admin(brokers: string[]) {
  return new Kafka({ brokers, clientId: 'queue-test', logLevel: logLevel.NOTHING }).admin();
}

/** Committed offset of the group per partition (-1: nothing committed). */
export async function committedOffsets(
  brokers: string[],
  groupId: string,
  topic: string,
): Promise<Record<number, number>> {
  const client = admin(brokers);
  await client.connect();
  try {
    const [result] = await client.fetchOffsets({ groupId, topics: [topic] });
    return Object.fromEntries(result.partitions.map((entry) => [entry.partition, Number(entry.offset)]));
  } finally {
    await client.disconnect();
  }
}

/** Messages in the topic (sum of the partitions' high watermarks; the topics start at 0). */
export async function messageCount(brokers: string[], topic: string): Promise<number> {
  const client = admin(brokers);
  await client.connect();
  try {
    const offsets = await client.fetchTopicOffsets(topic);
    return offsets.reduce((sum, entry) => sum + Number(entry.high), 0);
  } finally {
    await client.disconnect();
  }
}

export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** How `promise` settled, or 'pending' if it had not after `timeoutMs` (a deadline, not a benchmark). */
export async function settledWithin<T>(
  promise: Promise<T>,
  timeoutMs: number,
): Promise<{ state: 'resolved'; value: T } | { state: 'rejected'; error: unknown } | { state: 'pending' }> {
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<{ state: 'pending' }>((resolve) => {
    timer = setTimeout(() => resolve({ state: 'pending' }), timeoutMs);
  });
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ state: 'resolved' as const, value }),
        (error: unknown) => ({ state: 'rejected' as const, error }),
      ),
      pending,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export interface LoggedLine {
  level: 'error' | 'warn' | 'info' | 'debug';
  message: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps every line, for tests that count what an operator would read. */
export function capturingLogger(): QueueLogger & { lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const record =
    (level: LoggedLine['level']) =>
    (fields: object, message?: string): void => {
      lines.push({ level, message: message ?? '', fields: { ...fields } });
    };
  return {
    lines,
    error: record('error'),
    warn: record('warn'),
    info: record('info'),
    debug: record('debug'),
  };
}

export interface KafkaBrokerHandle {
  brokers: string;
  port: number;
  controllerPort: number;
  /** The broker's JVM (SIGSTOP makes it unresponsive without closing its connections). */
  pid: number;
  stop(): Promise<void>;
}

export interface ThrowawayBrokerOptions {
  port?: number;
  controllerPort?: number;
  /** Keep the topics' data here, so a restart on the same ports finds them again. */
  logDir?: string;
}

type StartKafkaBroker = (
  options: ThrowawayBrokerOptions & { log: (message: string) => void },
) => Promise<KafkaBrokerHandle>;

/** A broker of the test's own (tools/kafka-broker.mjs), for tests that stop it. */
export async function startThrowawayBroker(options: ThrowawayBrokerOptions = {}): Promise<KafkaBrokerHandle> {
  const modulePath = path.resolve(__dirname, '../../../../tools/kafka-broker.mjs');
  const { startKafkaBroker } = (await import(modulePath)) as { startKafkaBroker: StartKafkaBroker };
  return startKafkaBroker({ port: 0, controllerPort: 0, ...options, log: () => undefined });
}
