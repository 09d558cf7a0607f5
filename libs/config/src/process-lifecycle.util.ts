import { ConfigError } from './env.util';

/**
 * Runs `stop` once on the first SIGINT or SIGTERM, then exits 0 (1 when stopping failed). Every
 * app's shutdown goes through here: stop intake, drain, flush, commit, exit.
 */
export function stopOnSignal(
  stop: (signal: string) => Promise<void>,
  onError: (error: unknown) => void,
): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        onError(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handle);
  process.once('SIGTERM', handle);
}

/** Runs an app's `main`, printing a configuration error as its one-line message and exiting 1. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  });
}
