import type { LoggerService } from '@nestjs/common';
import type { Logger as PinoLogger } from 'pino';

type Level = 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal';

/**
 * Nest's logger interface over pino, so framework and app logs are one JSON stream.
 * Accepts both Nest's `(message, context)` and pino's `(object, message)` call shapes.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: PinoLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    // Nest appends the context (the logger's name) as the last string argument.
    const context =
      rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    if (message !== null && typeof message === 'object' && !(message instanceof Error)) {
      const text = typeof rest[0] === 'string' ? rest[0] : undefined;
      this.pino[level]({ context, ...(message as Record<string, unknown>) }, text);
    } else if (message instanceof Error) {
      this.pino[level]({ context, err: message }, message.message);
    } else {
      const stack = level === 'error' && typeof rest[0] === 'string' ? rest[0] : undefined;
      this.pino[level]({ context, ...(stack ? { stack } : {}) }, String(message));
    }
  }
}
