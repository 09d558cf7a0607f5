import type { QueueMessage } from '@hogbase/event-contract';
import { InProcessBus, QueueUnavailableError } from '@hogbase/queue';
import { QUEUE_FAILURE_MEMORY_MS, QueueHealth } from './queue-health.publisher';

const message: QueueMessage = { key: '1:user', value: '{}' };

describe('QueueHealth', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('is not ready while the in-process bus has no consumer, and ready once it has one', async () => {
    const bus = new InProcessBus();
    const queue = new QueueHealth(bus, clock);
    expect(queue.check()).toEqual(expect.any(String));
    await bus.start(() => Promise.resolve());
    expect(queue.check()).toBe(true);
    await bus.stop();
    expect(queue.check()).toEqual(expect.any(String));
  });

  it('is not ready after a publish the queue refused, until one succeeds', async () => {
    let failing = true;
    const bus = new InProcessBus();
    await bus.start(() => (failing ? Promise.reject(new Error('ClickHouse is down')) : Promise.resolve()));
    const queue = new QueueHealth(bus, clock);

    await expect(queue.publish('events_plugin_ingestion', [message])).rejects.toBeInstanceOf(
      QueueUnavailableError,
    );
    expect(queue.check()).toMatch(/^the last publish failed: /);

    failing = false;
    await queue.publish('events_plugin_ingestion', [message]);
    expect(queue.check()).toBe(true);
    await bus.stop();
  });

  it('forgets a refused publish after a while, so a capture out of rotation tries again', async () => {
    const bus = new InProcessBus();
    await bus.start(() => Promise.reject(new Error('ClickHouse is down')));
    const queue = new QueueHealth(bus, clock);
    await expect(queue.publish('events_plugin_ingestion', [message])).rejects.toThrow();

    now += QUEUE_FAILURE_MEMORY_MS - 1;
    expect(queue.check()).not.toBe(true);
    now += 1;
    expect(queue.check()).toBe(true);
    await bus.stop();
  });
});
