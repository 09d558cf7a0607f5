import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSRequestTimeoutError,
  logLevel,
} from 'kafkajs';
import { toQueueError } from './kafka-client.util';
import { MessageTooLargeError, QueueUnavailableError } from './queue.errors';
import { kafkaLogCreator } from './queue-logger.util';

function protocolError(type: string, code: number, retriable: boolean): KafkaJSProtocolError {
  return new KafkaJSProtocolError(Object.assign(new Error(`broker says ${type}`), { type, code, retriable }));
}

describe('toQueueError', () => {
  it('maps the broker refusing a message as too large, even wrapped by retries, to MessageTooLargeError', () => {
    for (const type of ['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']) {
      const refused = protocolError(type, 10, false);
      // How kafkajs's retrier wraps a non-retriable error.
      const wrapped = Object.assign(new KafkaJSNonRetriableError(refused), { cause: refused });
      expect(toQueueError(refused, 'publish')).toBeInstanceOf(MessageTooLargeError);
      expect(toQueueError(wrapped, 'publish')).toBeInstanceOf(MessageTooLargeError);
    }
  });

  it('maps connection, timeout and exhausted-retry failures to QueueUnavailableError with the cause', () => {
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092');
    const failures = [
      refused,
      new KafkaJSRequestTimeoutError('Request Produce(key: 0, version: 7) timed out'),
      new KafkaJSNumberOfRetriesExceeded(refused, { retryCount: 5, retryTime: 1000 }),
      protocolError('NOT_LEADER_OR_FOLLOWER', 6, true),
    ];
    for (const failure of failures) {
      const mapped = toQueueError(failure, 'cannot publish to events');
      expect(mapped).toBeInstanceOf(QueueUnavailableError);
      expect((mapped as Error).message).toMatch(/^cannot publish to events: /);
      expect((mapped as Error).cause).toBe(failure);
    }
  });

  it('leaves errors that are not from kafkajs alone (a bug stays a bug, a 500)', () => {
    const bug = new TypeError('cannot read properties of undefined');
    expect(toQueueError(bug, 'publish')).toBe(bug);
  });
});

describe('kafkaLogCreator', () => {
  it('routes kafkajs log entries to the logger at their level, with the namespace and extra fields', () => {
    const calls: [string, object, string | undefined][] = [];
    const record = (level: string) => (object: object, message?: string) =>
      void calls.push([level, object, message]);
    const log = kafkaLogCreator({
      error: record('error'),
      warn: record('warn'),
      info: record('info'),
      debug: record('debug'),
    })(logLevel.INFO);
    const entry = (level: logLevel, message: string) => ({
      namespace: 'Consumer',
      level,
      label: 'X',
      log: { message, timestamp: '2026-01-01T00:00:00Z', logger: 'kafkajs', groupId: 'g' },
    });
    log(entry(logLevel.ERROR, 'Crash'));
    log(entry(logLevel.WARN, 'rebalancing'));
    log(entry(logLevel.INFO, 'Starting'));
    log(entry(logLevel.DEBUG, 'fetching'));
    expect(calls).toEqual([
      ['error', { kafkajs: 'Consumer', groupId: 'g' }, 'kafkajs: Crash'],
      ['warn', { kafkajs: 'Consumer', groupId: 'g' }, 'kafkajs: rebalancing'],
      ['info', { kafkajs: 'Consumer', groupId: 'g' }, 'kafkajs: Starting'],
      ['debug', { kafkajs: 'Consumer', groupId: 'g' }, 'kafkajs: fetching'],
    ]);
  });

  it('in quiet mode logs every kafkajs line at debug and hands it to onLog', () => {
    const calls: [string, string | undefined][] = [];
    const record = (level: string) => (_object: object, message?: string) =>
      void calls.push([level, message]);
    const seen: unknown[] = [];
    const log = kafkaLogCreator(
      { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') },
      { quiet: true, onLog: (entry) => seen.push(entry) },
    )(logLevel.INFO);
    log({
      namespace: 'Connection',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { message: 'Connection error: connect ECONNREFUSED', timestamp: 'now', logger: 'kafkajs' },
    });
    expect(calls).toEqual([['debug', 'kafkajs: Connection error: connect ECONNREFUSED']]);
    expect(seen).toEqual([
      { level: 'error', namespace: 'Connection', message: 'Connection error: connect ECONNREFUSED' },
    ]);
  });
});
