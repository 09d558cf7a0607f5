import { logLevel, type logCreator } from 'kafkajs';

/** A pino `Logger` fits as it is. */
export interface QueueLogger {
  error(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  info(object: object, message?: string): void;
  debug(object: object, message?: string): void;
}

export const silentLogger: QueueLogger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
};

export interface KafkaLogEntry {
  level: 'error' | 'warn' | 'info' | 'debug';
  namespace: string;
  message: string;
}

export interface KafkaLogOptions {
  /** Every kafkajs line at debug level, whatever its own level. */
  quiet?: boolean;
  onLog?: (entry: KafkaLogEntry) => void;
}

const LEVELS: Partial<Record<logLevel, KafkaLogEntry['level']>> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

export function kafkaLogCreator(logger: QueueLogger, options: KafkaLogOptions = {}): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const entryLevel = LEVELS[level];
      if (!entryLevel) return;
      const { message, timestamp: _timestamp, logger: _name, ...extra } = log;
      options.onLog?.({ level: entryLevel, namespace, message });
      logger[options.quiet ? 'debug' : entryLevel]({ kafkajs: namespace, ...extra }, `kafkajs: ${message}`);
    };
}
