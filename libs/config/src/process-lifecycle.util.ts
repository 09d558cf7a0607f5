import { ConfigError } from './env.util';

/** Where {@link runMain} reports an error nothing else caught (pino's `error(object, message)`). */
export interface ProcessErrorLogger {
  error(object: Record<string, unknown>, message: string): void;
}

/** pino's level number for `error`: the lines below read like the app's own pino lines. */
const PINO_ERROR_LEVEL = 50;

/** Writes a line in pino's shape to stderr, for when no logger is given. */
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
 * Runs an app's `main`, printing a configuration error as its one-line message and exiting 1.
 *
 * It also installs the process's last line of defence: an exception or a rejection that nothing
 * handled (a bug, in whatever library) is logged and the process keeps serving, so that one bad
 * event or request cannot take every tenant's service down with it. Only a ConfigError (start-up)
 * still ends it.
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
