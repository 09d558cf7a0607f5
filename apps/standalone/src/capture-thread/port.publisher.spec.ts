import { MessageTooLargeError, QueueUnavailableError } from '@hogbase/queue';
import type { FromCaptureThread } from './capture-thread.protocol';
import { PortPublisher, toPublishError, toPublishFailure } from './port.publisher';

const message = { key: '1:user', value: '{}', headers: { token: 'phc_x' } };

function publisherWithPort() {
  const sent: FromCaptureThread[] = [];
  const publisher = new PortPublisher(
    { postMessage: (sentMessage) => sent.push(sentMessage) },
    { ready: true },
  );
  return { publisher, sent };
}

describe('PortPublisher', () => {
  it('posts each publish and resolves it when the main thread says it is done', async () => {
    const { publisher, sent } = publisherWithPort();
    let resolved = false;
    const publish = publisher.publish('events', [message]).then(() => {
      resolved = true;
    });

    expect(sent).toEqual([{ type: 'publish', id: 0, topic: 'events', messages: [message] }]);
    await Promise.resolve();
    expect(resolved).toBe(false);
    publisher.settle(0, undefined);
    await publish;
    expect(resolved).toBe(true);
  });

  it('rejects with the queue error the main thread reported, so capture answers as it would there', async () => {
    const { publisher } = publisherWithPort();
    const unavailable = publisher.publish('events', [message]);
    const tooLarge = publisher.publish('events', [message]);

    publisher.settle(0, toPublishFailure(new QueueUnavailableError('the bus is stopped')));
    publisher.settle(1, toPublishFailure(new MessageTooLargeError('too large', 1_000)));

    await expect(unavailable).rejects.toEqual(new QueueUnavailableError('the bus is stopped'));
    await expect(tooLarge).rejects.toBeInstanceOf(MessageTooLargeError);
    await expect(tooLarge).rejects.toMatchObject({ maxBytes: 1_000 });
  });

  it('takes any other failure as the queue being unavailable: the events were not acknowledged', () => {
    expect(toPublishError(toPublishFailure(new TypeError('boom')))).toEqual(
      new QueueUnavailableError('boom'),
    );
    expect(toPublishError(toPublishFailure('not an error'))).toBeInstanceOf(QueueUnavailableError);
  });

  it('says the readiness the main thread last reported', () => {
    const { publisher } = publisherWithPort();
    publisher.setReadiness({ ready: false, reason: 'no consumer' });

    expect(publisher.ready()).toEqual({ ready: false, reason: 'no consumer' });
  });

  it('on close, refuses new publishes and waits for the answers to those in flight', async () => {
    const { publisher } = publisherWithPort();
    const inFlight = publisher.publish('events', [message]);
    let closed = false;
    const closing = publisher.close().then(() => {
      closed = true;
    });

    const closingAgain = publisher.close();

    await expect(publisher.publish('events', [message])).rejects.toBeInstanceOf(QueueUnavailableError);
    expect(publisher.ready()).toMatchObject({ ready: false });
    await Promise.resolve();
    expect(closed).toBe(false);
    publisher.settle(0, undefined);
    await Promise.all([inFlight, closing, closingAgain]);
    expect(closed).toBe(true);
  });
});
