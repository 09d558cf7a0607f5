import { randomUUID } from 'node:crypto';
import { EVENTS_TOPIC, type CapturedEvent } from '@hogbase/event-contract';
import { ensureTopics, eventTopicSpecs, KafkaEventConsumer, KafkaEventPublisher } from '@hogbase/queue';
import { eventually } from '@hogbase/test-support';
import { CaptureTestApp, PROJECT_TOKEN, startCaptureTestApp } from './capture-test-app';

const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);

describe('capture through Kafka', () => {
  beforeAll(() => {
    if (brokers.length === 0)
      throw new Error('KAFKA_BROKERS is not set: run through `npm test`, which starts a broker');
  });

  it('answers 200 only once the broker holds the events, keyed by project and distinct id', async () => {
    await ensureTopics(brokers, eventTopicSpecs(2, 1));
    const publisher = new KafkaEventPublisher({ brokers, timeoutMs: 10_000 });
    const capture: CaptureTestApp = await startCaptureTestApp(publisher);
    const distinctId = `kafka-${randomUUID()}`;
    const seen: { key: string | null; event: CapturedEvent }[] = [];
    const consumer = new KafkaEventConsumer({
      brokers,
      groupId: `capture-test-${randomUUID()}`,
      topics: [EVENTS_TOPIC],
    });
    try {
      const response = await fetch(`${capture.baseUrl}/batch/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          api_key: PROJECT_TOKEN,
          batch: [1, 2, 3].map((index) => ({ event: `kafka ${index}`, distinct_id: distinctId })),
        }),
      });
      expect(response.status).toBe(200);
      await consumer.start((batch) => {
        for (const message of batch.messages) {
          const event = JSON.parse(message.value) as CapturedEvent;
          if (event.distinct_id === distinctId) seen.push({ key: message.key, event });
        }
        return Promise.resolve();
      });
      await eventually('the three events on the topic', () => seen.length >= 3, { timeoutMs: 20_000 });
      expect(seen.map(({ event }) => event.event)).toEqual(['kafka 1', 'kafka 2', 'kafka 3']);
      expect(new Set(seen.map(({ key }) => key))).toEqual(new Set([`${capture.teamId}:${distinctId}`]));
    } finally {
      await consumer.stop();
      await capture.close();
      await publisher.close();
    }
  });

  it('answers 503 when Kafka is unreachable, acknowledging nothing', async () => {
    // A port where no broker listens: the publish times out and capture must not answer 200.
    const publisher = new KafkaEventPublisher({ brokers: ['127.0.0.1:1'], timeoutMs: 2_000 });
    const capture = await startCaptureTestApp(publisher);
    try {
      const response = await fetch(`${capture.baseUrl}/capture/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ api_key: PROJECT_TOKEN, event: 'nowhere', distinct_id: 'u' }),
      });
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ code: 'service_unavailable' });
    } finally {
      await capture.close();
      await publisher.close();
    }
  });
});
