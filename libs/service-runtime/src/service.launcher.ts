import pino, { type Logger } from 'pino';
import { type LogLevel, runMain } from '@hogbase/config';
import { startProbeServer } from './probe.server';
import type { RunningService } from './service.types';

/**
 * Bounds a stop nothing else would end (a shell, `npm start`): with Kafka down, a stop waits on the
 * producer's retries for longer than orchestrators' grace.
 */
export const STOP_DEADLINE_MS = 120_000;

export interface StopLogger {
  error(object: object, message: string): void;
}

export interface StopOnSignalOptions {
  logger: StopLogger;
  deadlineMs?: number;
}

/**
 * Runs `stop` once on the first SIGINT or SIGTERM, then exits 0 (1 if it fails or overruns). TRICKY:
 * listeners are `once`, so a second Ctrl-C ends the process at once, as Node does with no listener.
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

export interface LaunchedProcess {
  /** Logged with `{ signal }` when a signal starts the stop. */
  stopping: string;
  stop(): Promise<void>;
}

export interface ServiceLaunch<Config> {
  app?: string;
  /** Reads the app's configuration, once; a ConfigError ends the process with its one line. */
  loadConfig(): Config;
  logLevel(config: Config): LogLevel;
  /** Opens what the process needs and starts serving; a throw ends the process with exit 1. */
  start(config: Config, logger: Logger): Promise<LaunchedProcess>;
}

/** One app as its process: config, logger, start, then the bounded stop on SIGINT or SIGTERM. */
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
  stopping: string;
}

/**
 * A service with no HTTP app (ingestion, workers) and a probe server; it stops the service first,
 * then its engines, and the probes answer until the end.
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
