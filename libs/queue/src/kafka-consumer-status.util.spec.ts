import { KafkaConsumerState } from './kafka-consumer-status.util';
import { KafkaEventConsumer } from './kafka.consumer';
import { capturingLogger } from './testing/kafka-test.util';

function lines(log: ReturnType<typeof capturingLogger>): string[] {
  return log.lines.map((line) => `${line.level} ${String(line.fields.status)}`);
}

describe('KafkaConsumerState', () => {
  it('logs a broker outage once, however many failed attempts it spans, and once more when it ends', () => {
    const log = capturingLogger();
    const state = new KafkaConsumerState(log, 'group');
    state.starting();
    state.joinedGroup({ events: [0, 1] });
    for (let attempt = 1; attempt <= 20; attempt++) {
      state.kafkaUnavailable(`Connection error: connect ECONNREFUSED (attempt ${attempt})`);
    }
    expect(state.readiness()).toEqual({
      ready: false,
      reason: 'Kafka is unavailable: Connection error: connect ECONNREFUSED (attempt 20)',
    });
    state.kafkaAnswered();

    expect(state.readiness()).toEqual({ ready: true });
    expect(lines(log)).toEqual([
      'info starting',
      'info consuming',
      'warn kafka_unavailable',
      'info consuming',
    ]);
  });

  it('is not ready while a partition fails, until that partition succeeds or a new assignment comes', () => {
    const log = capturingLogger();
    const state = new KafkaConsumerState(log, 'group');
    state.starting();
    state.joinedGroup({ events: [0, 1] });
    state.batchFailed('events', 0, '10', new Error('Postgres is down'));
    state.batchFailed('events', 1, '20', new Error('Postgres is down'));
    expect(state.batchSucceeded('events', 0)).toBe(true);
    expect(state.readiness().ready).toBe(false);
    expect(state.batchSucceeded('events', 1)).toBe(true);
    expect(state.readiness()).toEqual({ ready: true });

    state.batchFailed('events', 1, '20', new Error('Postgres is down'));
    state.rebalancing();
    expect(state.readiness()).toEqual({ ready: false, reason: 'rejoining the consumer group' });
    // The partition went to another member: its failure is not this member's any more.
    state.joinedGroup({ events: [0] });
    expect(state.readiness()).toEqual({ ready: true });
    expect(lines(log)).toEqual([
      'info starting',
      'info consuming',
      'warn handler_failing',
      'info consuming',
      'warn handler_failing',
      'info rejoining',
      'info consuming',
    ]);
  });

  it('stays alive through transient problems and only dies on a failure or a stop', () => {
    const state = new KafkaConsumerState(capturingLogger(), 'group');
    expect(state.alive).toBe(false);
    state.starting();
    state.kafkaUnavailable('Connection timeout');
    state.restarting(new Error('KafkaJSNumberOfRetriesExceeded'));
    expect(state.alive).toBe(true);
    state.failed(new Error('a bug'));
    expect(state.alive).toBe(false);
    expect(state.readiness()).toEqual({ ready: false, reason: 'the Kafka consumer failed: a bug' });
  });
});

describe('KafkaEventConsumer without a broker', () => {
  it('rejects start() for options kafkajs refuses, and reports it as failed', async () => {
    const consumer = new KafkaEventConsumer({
      brokers: ['127.0.0.1:1'],
      groupId: 'group',
      topics: ['events'],
      sessionTimeoutMs: 6_000,
      heartbeatIntervalMs: 6_000,
    });
    await expect(consumer.start(() => Promise.resolve())).rejects.toThrow(/heartbeatInterval/);
    expect(consumer.healthy()).toBe(false);
    expect(consumer.ready().reason).toMatch(/^the Kafka consumer failed: /);
    await consumer.stop();
  });

  it('stops at once when it was never started', async () => {
    const consumer = new KafkaEventConsumer({
      brokers: ['127.0.0.1:1'],
      groupId: 'group',
      topics: ['events'],
    });
    await consumer.stop();
    expect(consumer.ready()).toEqual({ ready: false, reason: 'the Kafka consumer is stopped' });
    await expect(consumer.start(() => Promise.resolve())).rejects.toThrow(/starts only once/);
  });
});
