import { logLevel, type logCreator } from 'kafkajs';

/** The slice of a pino logger the queue uses; a pino `Logger` fits as it is. */
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

/**
 * Routes kafkajs's own logging into `logger` instead of the console. kafkajs filters by its level
 * first (`INFO`: group joins, starts, stops, errors), then the logger applies its own level.
 */
export function kafkaLogCreator(logger: QueueLogger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      const { message, timestamp: _timestamp, logger: _name, ...extra } = log;
      const entry = { kafkajs: namespace, ...extra };
      const text = `kafkajs: ${message}`;
      switch (level) {
        case logLevel.ERROR:
          logger.error(entry, text);
          break;
        case logLevel.WARN:
          logger.warn(entry, text);
          break;
        case logLevel.INFO:
          logger.info(entry, text);
          break;
        case logLevel.DEBUG:
          logger.debug(entry, text);
          break;
        case logLevel.NOTHING:
          break;
      }
    };
}
