import { ConfigError } from './env.util';

export interface ProcessErrorLogger {
  error(object: Record<string, unknown>, message: string): void;
}

const PINO_ERROR_LEVEL = 50;

const stderrLogger: ProcessErrorLogger = {
  error(object, message) {
    console.error(
      JSON.stringify({
        level: PINO_ERROR_LEVEL,
        time: Date.now(),
        pid: process.pid,
        ...object,
        msg: message,
      }),
    );
  },
};

function serializeError(error: unknown): Record<string, unknown> {
  return error instanceof Error
    ? { type: error.name, message: error.message, stack: error.stack }
    : { type: typeof error, message: String(error) };
}

/**
 * A ConfigError prints its one line and exits 1; any other unhandled error is logged and the process
 * keeps serving: one bad event cannot take every tenant's service down.
 */
export function runMain(main: () => Promise<void>, logger: ProcessErrorLogger = stderrLogger): void {
  const fatal = (error: ConfigError) => {
    console.error(error.message);
    process.exit(1);
  };
  process.on('uncaughtException', (error: unknown) => {
    if (error instanceof ConfigError) fatal(error);
    logger.error({ err: serializeError(error) }, 'uncaught exception; the process keeps running');
  });
  process.on('unhandledRejection', (reason: unknown) => {
    if (reason instanceof ConfigError) fatal(reason);
    logger.error({ err: serializeError(reason) }, 'unhandled promise rejection; the process keeps running');
  });
  main().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  });
}
