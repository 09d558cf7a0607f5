import { Kafka, logLevel, type RetryOptions } from 'kafkajs';
import { patchKafkaJsRequestQueue } from './kafkajs-request-queue.patch';
import { QueueUnavailableError, MessageTooLargeError } from './queue.errors';
import { kafkaLogCreator, silentLogger, type KafkaLogEntry, type QueueLogger } from './queue-logger.util';

// Any kafkajs client of the process benefits, including ones created without createKafkaClient.
patchKafkaJsRequestQueue();

export interface KafkaClientOptions {
  /** `host:port`. */
  brokers: readonly string[];
  clientId?: string;
  logger?: QueueLogger;
  connectionTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/** Not part of the public options. */
export interface KafkaClientTuning {
  /** Default: give up connecting after about 2.5 s instead of kafkajs's ~1 min. */
  retry?: RetryOptions;
  /** kafkajs's lines go to debug and `onLog`: the owner logs each state change once, not every attempt. */
  quiet?: boolean;
  onLog?: (entry: KafkaLogEntry) => void;
}

export function createKafkaClient(options: KafkaClientOptions, tuning: KafkaClientTuning = {}): Kafka {
  if (options.brokers.length === 0) throw new Error('Kafka needs at least one broker (host:port)');
  return new Kafka({
    brokers: [...options.brokers],
    clientId: options.clientId ?? 'hogbase',
    connectionTimeout: options.connectionTimeoutMs ?? 3_000,
    requestTimeout: options.requestTimeoutMs ?? 30_000,
    retry: tuning.retry ?? { initialRetryTime: 100, maxRetryTime: 1_000, retries: 5, multiplier: 2 },
    logLevel: logLevel.INFO,
    logCreator: kafkaLogCreator(options.logger ?? silentLogger, { quiet: tuning.quiet, onLog: tuning.onLog }),
  });
}

const TOO_LARGE_TYPES = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** Outermost first (kafkajs wraps the broker's error in retry errors). */
export function causeChain(error: unknown): unknown[] {
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

/** Anything that is not a kafkajs error (a bug) is returned unchanged. */
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

/** Broker answers that retrying cannot change. */
const CONFIGURATION_ERROR_TYPES = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'INVALID_TOPIC_EXCEPTION',
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'INVALID_GROUP_ID',
  'SASL_AUTHENTICATION_FAILED',
]);

export function isKafkaConfigurationError(error: unknown): boolean {
  return causeChain(error).some(
    (item) =>
      typeof item === 'object' &&
      item !== null &&
      CONFIGURATION_ERROR_TYPES.has(String((item as { type?: unknown }).type)),
  );
}
