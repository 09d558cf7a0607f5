import {
  DEAD_LETTER_TOPIC,
  EVENTS_TOPIC,
  HISTORICAL_EVENTS_TOPIC,
  type QueueMessage,
} from '@hogbase/event-contract';
import { DEAD_LETTER_REASON_HEADER, publishDeadLetter } from './dead-letter.util';
import { InProcessBus } from './in-process-bus.server';
import { QueueUnavailableError } from './queue.errors';
import { silentLogger } from './queue-logger.util';
import type { ConsumedBatch, ConsumedMessage, DecodedBatch } from './queue.types';

function message(key: string, sequence: number): QueueMessage {
  return { key, value: JSON.stringify({ key, sequence }), headers: { sequence: String(sequence) } };
}

/** A promise with its resolve function, to hold the handler mid-batch. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/**
 * A handler whose first call says it waits, then holds until `insert` opens (as the ingestion
 * handler's call waits for its ClickHouse insert); later calls end at once.
 */
function firstCallWaits<Decoded>(batches: DecodedBatch<Decoded>[], insert: { opened: Promise<void> }) {
  return async (batch: DecodedBatch<Decoded>) => {
    batches.push(batch);
    if (batches.length > 1) return;
    batch.waiting();
    await insert.opened;
  };
}

describe('InProcessBus', () => {
  it('coalesces publishes that arrive while a batch is processed into one handler call', async () => {
    const bus = new InProcessBus();
    const first = gate();
    const batches: ConsumedBatch[] = [];
    let written = 0;
    await bus.start(async (batch) => {
      batches.push(batch);
      if (batches.length === 1) await first.opened;
      written += batch.messages.length;
    });

    const firstPublish = bus.publish(EVENTS_TOPIC, [message('a', 0)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toHaveLength(1);

    const settled: number[] = [];
    const later = Array.from({ length: 50 }, (_, index) =>
      bus.publish(EVENTS_TOPIC, [message(`k${index}`, 1), message(`k${index}`, 2)]).then(() => {
        // Resolved only once its messages were written by the handler.
        settled.push(written);
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toEqual([]);

    first.open();
    await Promise.all([firstPublish, ...later]);
    expect(batches.map((batch) => batch.messages.length)).toEqual([1, 100]);
    expect(settled.every((writtenWhenResolved) => writtenWhenResolved === 101)).toBe(true);
  });

  it('joins publishes issued in the same tick into the first batch', async () => {
    const bus = new InProcessBus();
    const sizes: number[] = [];
    await bus.start(async (batch) => {
      sizes.push(batch.messages.length);
      await Promise.resolve();
    });
    await Promise.all(
      Array.from({ length: 20 }, (_, index) => bus.publish(EVENTS_TOPIC, [message('k', index)])),
    );
    expect(sizes).toEqual([20]);
  });

  it('keeps every key in publish order across batches and splits at maxBatchSize', async () => {
    const bus = new InProcessBus({ maxBatchSize: 7 });
    const seen = new Map<string, number[]>();
    const sizes: number[] = [];
    const offsets: string[] = [];
    await bus.start(async (batch) => {
      sizes.push(batch.messages.length);
      for (const consumed of batch.messages) {
        const { key, sequence } = JSON.parse(consumed.value) as { key: string; sequence: number };
        seen.set(key, [...(seen.get(key) ?? []), sequence]);
        offsets.push(consumed.offset);
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    });
    const publishes: Promise<void>[] = [];
    for (let sequence = 0; sequence < 10; sequence++) {
      for (const key of ['a', 'b', 'c']) publishes.push(bus.publish(EVENTS_TOPIC, [message(key, sequence)]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    // One publish bigger than a batch: split over consecutive calls, in order.
    publishes.push(
      bus.publish(
        EVENTS_TOPIC,
        Array.from({ length: 16 }, (_, index) => message('d', index)),
      ),
    );
    await Promise.all(publishes);

    for (const key of ['a', 'b', 'c']) expect(seen.get(key)).toEqual([...Array(10).keys()]);
    expect(seen.get('d')).toEqual([...Array(16).keys()]);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(7);
    expect(offsets).toEqual(offsets.map((_, index) => String(index)));
  });

  it('rejects the publishes of a failed batch with QueueUnavailableError and serves later ones', async () => {
    const bus = new InProcessBus();
    const first = gate();
    let calls = 0;
    const written: string[] = [];
    await bus.start(async (batch) => {
      calls += 1;
      if (calls === 1) await first.opened;
      if (calls === 2) throw new Error('ClickHouse is down');
      written.push(...batch.messages.map((consumed) => consumed.key!));
    });

    const ok = bus.publish(EVENTS_TOPIC, [message('first', 0)]);
    await new Promise((resolve) => setImmediate(resolve));
    const failing = [
      bus.publish(EVENTS_TOPIC, [message('x', 0)]),
      bus.publish(EVENTS_TOPIC, [message('y', 0)]),
    ];
    first.open();
    await expect(ok).resolves.toBeUndefined();
    for (const publish of failing) {
      const error = await publish.then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
      expect(error).toBeInstanceOf(QueueUnavailableError);
      expect((error as Error).cause).toEqual(new Error('ClickHouse is down'));
    }
    await expect(bus.publish(EVENTS_TOPIC, [message('after', 0)])).resolves.toBeUndefined();
    expect(written).toEqual(['first', 'after']);
  });

  it('does not write the rest of a split publish once one of its parts failed', async () => {
    const bus = new InProcessBus({ maxBatchSize: 2 });
    const written: string[] = [];
    let calls = 0;
    await bus.start(async (batch) => {
      calls += 1;
      await Promise.resolve();
      if (calls === 1) throw new Error('Postgres is down');
      written.push(...batch.messages.map((consumed) => consumed.value));
    });
    const big = bus.publish(EVENTS_TOPIC, [
      message('a', 0),
      message('a', 1),
      message('a', 2),
      message('a', 3),
    ]);
    await expect(big).rejects.toBeInstanceOf(QueueUnavailableError);
    await bus.stop();
    expect(written).toEqual([]);
  });

  it('stop() refuses new publishes and resolves only after the queued ones are processed', async () => {
    const bus = new InProcessBus();
    const first = gate();
    const written: number[] = [];
    await bus.start(async (batch) => {
      if (written.length === 0) await first.opened;
      written.push(...batch.messages.map((consumed) => Number(consumed.headers.sequence)));
    });
    const publishes = [0, 1, 2].map((sequence) => bus.publish(EVENTS_TOPIC, [message('k', sequence)]));
    await new Promise((resolve) => setImmediate(resolve));

    let stopped = false;
    const stopping = bus.stop().then(() => (stopped = true));
    await expect(bus.publish(EVENTS_TOPIC, [message('k', 3)])).rejects.toBeInstanceOf(QueueUnavailableError);
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    expect(bus.healthy()).toBe(false);

    first.open();
    await stopping;
    await Promise.all(publishes);
    expect(written).toEqual([0, 1, 2]);
  });

  it('refuses publishes while no consumer is started, and says so in ready()', async () => {
    const bus = new InProcessBus();
    expect(bus.healthy()).toBe(false);
    expect(bus.ready()).toEqual({ ready: false, reason: 'no consumer is running on the in-process bus' });
    await expect(bus.publish(EVENTS_TOPIC, [message('k', 0)])).rejects.toBeInstanceOf(QueueUnavailableError);
    await bus.start(() => Promise.resolve());
    expect(bus.healthy()).toBe(true);
    expect(bus.ready()).toEqual({ ready: true });
    await bus.stop();
    expect(bus.ready()).toEqual({ ready: false, reason: 'the in-process bus is stopped' });
  });

  it('refuses a publish once too many messages are waiting', async () => {
    const bus = new InProcessBus({ maxQueuedMessages: 3 });
    const first = gate();
    await bus.start(() => first.opened);
    const accepted = [bus.publish(EVENTS_TOPIC, [message('k', 0)])];
    await new Promise((resolve) => setImmediate(resolve));
    accepted.push(bus.publish(EVENTS_TOPIC, [message('k', 1), message('k', 2)]));
    await expect(bus.publish(EVENTS_TOPIC, [message('k', 3), message('k', 4)])).rejects.toBeInstanceOf(
      QueueUnavailableError,
    );
    first.open();
    await Promise.all(accepted);
  });

  it('hands both event topics to the handler, each with its own batch', async () => {
    const bus = new InProcessBus();
    const topics: string[] = [];
    await bus.start(async (batch) => {
      topics.push(batch.topic);
      await Promise.resolve();
    });
    await Promise.all([
      bus.publish(EVENTS_TOPIC, [message('a', 0)]),
      bus.publish(HISTORICAL_EVENTS_TOPIC, [message('a', 0)]),
    ]);
    expect(topics.sort()).toEqual([EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC].sort());
  });

  it('decodes the queued messages while a handler call waits, and delivers those same objects with what it made', async () => {
    const bus = new InProcessBus();
    const insert = gate();
    const prepared: ConsumedMessage[] = [];
    const batches: DecodedBatch<{ decodedAhead: ConsumedMessage }>[] = [];
    await bus.startDecoding({
      decode: (queued) => {
        prepared.push(queued);
        return { decodedAhead: queued };
      },
      handle: firstCallWaits(batches, insert),
    });

    const first = bus.publish(EVENTS_TOPIC, [message('a', 0)]);
    await new Promise((resolve) => setImmediate(resolve));
    // Over two slices of PREPARE_SLICE (100) messages, all while the first call waits.
    const later = [
      bus.publish(
        EVENTS_TOPIC,
        Array.from({ length: 120 }, (_, index) => message('b', index)),
      ),
      bus.publish(
        EVENTS_TOPIC,
        Array.from({ length: 30 }, (_, index) => message('c', index)),
      ),
    ];
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(prepared.map(({ key }) => key)).toEqual([
      ...Array<string>(120).fill('b'),
      ...Array<string>(30).fill('c'),
    ]);

    insert.open();
    await Promise.all([first, ...later]);
    expect(batches).toHaveLength(2);
    expect(batches[0].messages.map(({ offset }) => offset)).toEqual(['0']);
    // The very objects that were prepared, in order, with their offsets.
    expect(batches[1].messages).toHaveLength(150);
    batches[1].messages.forEach((delivered, index) => expect(delivered).toBe(prepared[index]));
    expect(batches[1].messages.map(({ offset }) => Number(offset))).toEqual(
      Array.from({ length: 150 }, (_, index) => index + 1),
    );
    // What was decoded ahead, not decoded again; the first call's message, decoded now.
    expect(batches[1].decoded().map(({ decodedAhead }) => decodedAhead)).toEqual(prepared.slice(0, 150));
    expect(prepared).toHaveLength(150);
    expect(batches[0].decoded()).toEqual([{ decodedAhead: batches[0].messages[0] }]);
  });

  it('decodes nothing ahead for a call that does not say it waits, nor once the call has ended', async () => {
    const bus = new InProcessBus();
    const hold = gate();
    const prepared: string[] = [];
    const delivered: string[] = [];
    let third: Promise<void> | undefined;
    await bus.startDecoding({
      handle: async (batch) => {
        delivered.push(...batch.messages.map(({ key }) => key ?? ''));
        if (delivered.length === 1) await hold.opened;
        if (delivered.length === 2) {
          // Queued before this call ends, which then says it waits: nothing is left to wait for.
          third = bus.publish(EVENTS_TOPIC, [message('c', 0)]);
          batch.waiting();
        }
      },
      decode: (queued) => void prepared.push(queued.key ?? ''),
    });
    const first = bus.publish(EVENTS_TOPIC, [message('a', 0)]);
    await new Promise((resolve) => setImmediate(resolve));
    const second = bus.publish(EVENTS_TOPIC, [message('b', 0)]);
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(prepared).toEqual([]);
    hold.open();
    await Promise.all([first, second]);
    await third;
    expect(delivered).toEqual(['a', 'b', 'c']);
    expect(prepared).toEqual([]);
  });

  it('delivers a message whose decoding ahead threw, and logs the failure', async () => {
    const errors: unknown[] = [];
    const bus = new InProcessBus({
      logger: { ...silentLogger, error: (details) => void errors.push(details) },
    });
    const insert = gate();
    const batches: DecodedBatch<never>[] = [];
    await bus.startDecoding({
      handle: firstCallWaits(batches, insert),
      decode: () => {
        throw new Error('cannot decode');
      },
    });
    const first = bus.publish(EVENTS_TOPIC, [message('a', 0)]);
    await new Promise((resolve) => setImmediate(resolve));
    const second = bus.publish(EVENTS_TOPIC, [message('b', 0)]);
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    insert.open();
    await Promise.all([first, second]);
    expect(batches.map(({ messages }) => messages.map(({ key }) => key))).toEqual([['a'], ['b']]);
    expect(errors).toHaveLength(1);
  });

  it('passes dead letters to onOtherTopic with the reason header instead of the handler', async () => {
    const other: { topic: string; messages: QueueMessage[] }[] = [];
    const bus = new InProcessBus({ onOtherTopic: (topic, messages) => void other.push({ topic, messages }) });
    const handled: ConsumedBatch[] = [];
    await bus.start((batch) => {
      handled.push(batch);
      return Promise.resolve();
    });
    await publishDeadLetter(bus, message('k', 0), 'invalid JSON');
    expect(handled).toEqual([]);
    expect(other).toHaveLength(1);
    expect(other[0].topic).toBe(DEAD_LETTER_TOPIC);
    expect(other[0].messages[0].headers?.[DEAD_LETTER_REASON_HEADER]).toBe('invalid JSON');
    expect(other[0].messages[0].headers?.sequence).toBe('0');
  });
});

describe('InProcessBus as ingestion progress', () => {
  it('has processed a time once no publish begun before it (plus the publish bound) is waiting', async () => {
    const bus = new InProcessBus();
    const handler = gate();
    await bus.start(() => handler.opened);
    expect(await bus.processedUntil(new Date(Date.now() - 60_000))).toBe(true);

    const startedAt = Date.now();
    const published = bus.publish(EVENTS_TOPIC, [message('k', 1)]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // An event captured 5 s before the publish began may be in it (bound: 5 s).
    const justBefore = new Date(startedAt - 5_000 + 10);
    expect(await bus.processedUntil(justBefore)).toMatch(
      /^ingestion is still processing events captured before/,
    );
    // Long before the publish began: nothing captured then can be in it.
    expect(await bus.processedUntil(new Date(startedAt - 60_000))).toBe(true);
    // Too recent to tell: capture may still be about to publish.
    expect(await bus.processedUntil(new Date())).toMatch(/may be published until/);

    handler.open();
    await published;
    expect(await bus.processedUntil(justBefore)).toBe(true);
    await bus.stop();
  });
});
