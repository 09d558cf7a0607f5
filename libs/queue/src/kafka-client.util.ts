import { Kafka, logLevel, type RetryOptions } from 'kafkajs';
import { QueueUnavailableError, MessageTooLargeError } from './queue.errors';
import { kafkaLogCreator, silentLogger, type QueueLogger } from './queue-logger.util';

export interface KafkaClientOptions {
  /** Bootstrap brokers, `host:port`. */
  brokers: readonly string[];
  clientId?: string;
  logger?: QueueLogger;
  /** Time to open a TCP connection to a broker (kafkajs default 1 s). */
  connectionTimeoutMs?: number;
  /** Time a broker has to answer one request (kafkajs default 30 s). */
  requestTimeoutMs?: number;
}

export function createKafkaClient(options: KafkaClientOptions): Kafka {
  if (options.brokers.length === 0) throw new Error('Kafka needs at least one broker (host:port)');
  return new Kafka({
    brokers: [...options.brokers],
    clientId: options.clientId ?? 'hogbase',
    connectionTimeout: options.connectionTimeoutMs ?? 3_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    // Connecting and metadata requests give up after about 2.5 s instead of kafkajs's ~1 min.
    retry: { initialRetryTime: 100, maxRetryTime: 1_000, retries: 5, multiplier: 2 } satisfies RetryOptions,
    logLevel: logLevel.INFO,
    logCreator: kafkaLogCreator(options.logger ?? silentLogger),
  });
}

const TOO_LARGE_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** The error and its causes, outermost first (kafkajs wraps the broker's error in retry errors). */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current = error;
  while (current !== undefined && current !== null && chain.length < 10 && !chain.includes(current)) {
    chain.push(current);
    current = current instanceof Error ? current.cause : undefined;
  }
  return chain;
}

function isKafkaJsError(error: unknown): error is Error {
  return error instanceof Error && error.name.startsWith('KafkaJS');
}

/**
 * Maps a kafkajs failure to the queue's errors: the broker refusing a message as too large
 * becomes MessageTooLargeError; every other broker or network failure QueueUnavailableError.
 * Anything that is not a kafkajs error (a bug) is returned unchanged.
 */
export function toQueueError(error: unknown, what: string): unknown {
  if (error instanceof QueueUnavailableError || error instanceof MessageTooLargeError) return error;
  const chain = causeChain(error);
  const tooLarge = chain.find(
    (item) =>
      typeof item === 'object' &&
      item !== null &&
      TOO_LARGE_TYPES.has(String((item as { type?: unknown }).type)),
  );
  if (tooLarge) {
    return new MessageTooLargeError(`${what}: the broker refused a message as too large`, undefined, {
      cause: error,
    });
  }
  if (chain.some(isKafkaJsError)) {
    const message = error instanceof Error ? error.message : String(error);
    return new QueueUnavailableError(`${what}: ${message}`, { cause: error });
  }
  return error;
}
