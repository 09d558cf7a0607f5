import pino, { type Logger } from 'pino';
import { type LogLevel, runMain } from '@hogbase/config';
import { startProbeServer } from './probe.server';
import type { RunningService } from './service.types';

/**
 * How long a stop may take once a signal arrived before the process exits 1 saying so. A stop
 * while Kafka is down waits on the producer's retries for longer than the orchestrators' grace, so
 * this only bounds a stop nothing else would end (a shell, `npm start`).
 */
export const STOP_DEADLINE_MS = 120_000;

/** Where stopOnSignal reports a failed or overdue stop (pino's `error(object, message)`). */
export interface StopLogger {
  error(object: object, message: string): void;
}

export interface StopOnSignalOptions {
  logger: StopLogger;
  /** STOP_DEADLINE_MS unless a test needs a shorter one. */
  deadlineMs?: number;
}

/**
 * Runs `stop` once on the first SIGINT or SIGTERM, then exits 0; 1 when stopping failed or did not
 * finish within the deadline. Every app's shutdown goes through here: stop intake, drain, flush,
 * commit, exit.
 *
 * TRICKY: each listener is `once`: while stopping, the other signal is ignored, but the same one
 * again (a second Ctrl-C) ends the process at once, as Node does with no listener.
 */
export function stopOnSignal(
  stop: (signal: NodeJS.Signals) => Promise<void>,
  { logger, deadlineMs = STOP_DEADLINE_MS }: StopOnSignalOptions,
): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      logger.error({ signal, deadlineMs }, `shutdown did not finish within ${deadlineMs} ms; exiting`);
      process.exit(1);
    }, deadlineMs);
    stop(signal).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handle);
  process.once('SIGTERM', handle);
}

/** What a started process leaves to the launcher: how to stop it, and the line that says so. */
export interface LaunchedProcess {
  /** Logged with `{ signal }` when a signal starts the stop. */
  stopping: string;
  stop(): Promise<void>;
}

export interface ServiceLaunch<Config> {
  /** Every log line carries `{ app }` when set. */
  app?: string;
  /** Reads the app's configuration, once; a ConfigError ends the process with its one line. */
  loadConfig(): Config;
  logLevel(config: Config): LogLevel;
  /** Opens what the process needs and starts serving; a throw ends the process with exit 1. */
  start(config: Config, logger: Logger): Promise<LaunchedProcess>;
}

/**
 * Runs one app as its process: config, logger, start, then on SIGINT or SIGTERM the stop, bounded
 * by STOP_DEADLINE_MS. Exit codes: 1 when the start fails (a ConfigError as its one line), 0 after
 * a clean stop, 1 when the stop fails or overruns.
 */
export function launchService<Config>(launch: ServiceLaunch<Config>): void {
  runMain(async () => {
    const config = launch.loadConfig();
    const root = pino({ level: launch.logLevel(config) });
    const logger = launch.app === undefined ? root : root.child({ app: launch.app });
    const started = await launch.start(config, logger);
    stopOnSignal(
      async (signal) => {
        logger.info({ signal }, started.stopping);
        await started.stop();
      },
      { logger },
    );
  });
}

/** The settings of a service that answers its probes on a port of its own. */
export interface ProbedServiceConfig {
  host: string;
  port: number;
  logLevel: LogLevel;
  metricsToken: string | undefined;
}

export interface ProbedServiceLaunch<Config extends ProbedServiceConfig, Engines> {
  app: string;
  loadConfig(): Config;
  openEngines(config: Config, logger: Logger): Engines | Promise<Engines>;
  startService(config: Config, engines: NoInfer<Engines>): Promise<RunningService>;
  /** Logged with `{ signal }` when the stop starts. */
  stopping: string;
}

/**
 * A service with no HTTP app of its own (ingestion, workers): its engines, the service over them
 * and a probe server. The stop is in that order too: the service drains first, then the engines it
 * used close, and the probes answer until the end.
 */
export function launchProbedService<
  Config extends ProbedServiceConfig,
  Engines extends { close(): Promise<void> },
>(launch: ProbedServiceLaunch<Config, Engines>): void {
  launchService({
    app: launch.app,
    loadConfig: () => launch.loadConfig(),
    logLevel: (config) => config.logLevel,
    start: async (config, logger) => {
      const engines = await launch.openEngines(config, logger);
      const service = await launch.startService(config, engines);
      const probes = await startProbeServer(service, {
        host: config.host,
        port: config.port,
        logger,
        metricsToken: config.metricsToken,
      });
      logger.info(`${launch.app} probes on ${probes.url}/_ready`);
      return {
        stopping: launch.stopping,
        stop: async () => {
          await service.stop();
          await engines.close();
          await probes.close();
        },
      };
    },
  });
}
