// `npm run bench`: throughput and latency of the event pipeline against real services (bench/README.md).
// Everything it starts is stopped or removed on the way out, also on Ctrl-C.
import os from 'node:os';
import { ConfigError, loadKafkaConfig } from '@hogbase/config';
import { prepareEventStores } from '@hogbase/ingestion';
import { runAppsBench } from './apps.bench';
import { loadBenchConfig, type BenchConfig } from './bench.config';
import { createBenchDatabase, type BenchDatabase } from './bench-database.util';
import { runBatchBench, runSingleEventBench } from './capture.bench';
import { runLagBench } from './end-to-end-lag.bench';
import { ExportSteps, runExportsBench } from './exports.bench';
import { openIngestionPipeline, type IngestionPipeline } from './ingestion-pipeline.util';
import { runIngestionBench } from './ingestion.bench';
import { runFlagsBench } from './flag-evaluation.bench';
import { runListingBench } from './listing.bench';
import { startKafka } from './kafka-broker.util';
import { startPostgres } from './postgres-server.util';
import { printTable, type BenchSummary } from './report.util';
import { startS3 } from './s3-server.util';
import { runStandaloneBench } from './standalone.bench';
import { startTarget, type TargetProcess } from './target-process.util';

const SIGNAL_EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function log(message: string): void {
  console.log(`[bench] ${message}`);
}

/** Stop callbacks in start order; run in reverse, each once, even when one fails. */
class Stops {
  private readonly stops: { name: string; stop: () => Promise<void> }[] = [];
  private running: Promise<void> | undefined;

  push(name: string, stop: () => Promise<void>): void {
    this.stops.push({ name, stop });
  }

  runAll(): Promise<void> {
    this.running ??= (async () => {
      for (const { name, stop } of this.stops.reverse()) {
        try {
          await stop();
        } catch (error) {
          log(`stopping ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    })();
    return this.running;
  }
}

interface Services {
  database: BenchDatabase;
  brokers: string[];
  capture?: TargetProcess;
  ceiling?: TargetProcess;
  pipeline?: IngestionPipeline;
  s3Endpoint?: string;
  exportSteps?: ExportSteps;
}

async function startServices(config: BenchConfig, stops: Stops): Promise<Services> {
  const needs = (...names: BenchConfig['benchmarks']) =>
    names.some((name) => config.benchmarks.includes(name));

  const postgres = await startPostgres(config.databaseUrl, log);
  stops.push('PostgreSQL', () => postgres.stop());
  const database = await createBenchDatabase(postgres.url);
  stops.push('the bench database', () => database.drop());
  const services: Services = { database, brokers: [] };
  if (needs('exports')) {
    const s3 = await startS3(config.s3Endpoint, log);
    stops.push('S3', () => s3.stop());
    services.s3Endpoint = s3.endpoint;
    const steps = await ExportSteps.open(database.url);
    stops.push('the exports steps and their chDB directory', () => steps.close());
    services.exportSteps = steps;
  }
  if (!needs('batch', 'capture', 'ingestion', 'lag', 'flags', 'apps')) return services;
  const kafka = await startKafka(config.kafkaBrokers, log);
  stops.push('Kafka', () => kafka.stop());
  services.brokers = kafka.brokers;
  // The migrate step of a real deployment: the event topics with the default partition count.
  await prepareEventStores({ kafka: loadKafkaConfig({ KAFKA_BROKERS: kafka.brokers.join(',') }) });

  if (needs('batch', 'capture', 'lag', 'flags')) {
    services.capture = await startTarget(
      'capture',
      { DATABASE_URL: database.url, KAFKA_BROKERS: kafka.brokers.join(',') },
      config.cpuProfileDir,
    );
    stops.push('the capture target', () => services.capture?.stop() ?? Promise.resolve());
  }
  if (needs('batch', 'capture')) {
    services.ceiling = await startTarget('ceiling', {}, config.cpuProfileDir);
    stops.push('the ceiling target', () => services.ceiling?.stop() ?? Promise.resolve());
  }
  if (needs('ingestion', 'lag', 'apps')) {
    services.pipeline = await openIngestionPipeline(kafka.brokers, database.url);
    stops.push('the ingestion pipeline', () => services.pipeline?.close() ?? Promise.resolve());
  }
  return services;
}

function started<T>(service: T | undefined, name: string): T {
  if (service === undefined) throw new Error(`${name} was not started`);
  return service;
}

async function runBenchmarks(config: BenchConfig, services: Services): Promise<BenchSummary[]> {
  const summaries: BenchSummary[] = [];
  const { database } = services;
  const capture = () => started(services.capture, 'the capture target');
  const targets = () => ({
    capture: capture(),
    ceiling: started(services.ceiling, 'the ceiling target'),
    brokers: services.brokers,
  });
  const pipeline = () => started(services.pipeline, 'the ingestion pipeline');
  for (const name of config.benchmarks) {
    log(`--- ${name}`);
    switch (name) {
      case 'batch':
        summaries.push(await runBatchBench(config, targets(), await database.createProject('batch'), log));
        break;
      case 'capture':
        summaries.push(
          await runSingleEventBench(config, targets(), await database.createProject('capture'), log),
        );
        break;
      case 'ingestion':
        summaries.push(await runIngestionBench(config, pipeline(), database, log));
        break;
      case 'lag':
        summaries.push(await runLagBench(config, pipeline(), capture(), database, log));
        break;
      case 'listing':
        summaries.push(...(await runListingBench(config, database, log)));
        break;
      case 'flags':
        summaries.push(await runFlagsBench(config, capture(), database, log));
        break;
      case 'apps':
        summaries.push(await runAppsBench(config, pipeline(), database, log));
        break;
      case 'exports':
        summaries.push(
          await runExportsBench(
            config,
            {
              database,
              s3Endpoint: started(services.s3Endpoint, 'S3'),
              steps: started(services.exportSteps, 'the exports steps'),
            },
            log,
          ),
        );
        break;
      case 'standalone':
        summaries.push(await runStandaloneBench(config, log));
        break;
    }
  }
  return summaries;
}

async function main(): Promise<number> {
  let config: BenchConfig;
  try {
    config = loadBenchConfig(process.env, process.argv.slice(2));
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  log(
    `${os.cpus().length} CPUs, Node ${process.version}; ${config.benchmarks.join(', ')}; ` +
      `${plural(config.rounds, 'round')} each, medians reported`,
  );
  const stops = new Stops();
  let interrupted: string | undefined;
  const onSignal = (signal: string) => {
    if (interrupted) return;
    interrupted = signal;
    log(`received ${signal}, stopping what was started`);
    void stops.runAll().then(() => process.exit(SIGNAL_EXIT_CODES[signal]));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const startedAt = Date.now();
  try {
    const services = await startServices(config, stops);
    const summaries = await runBenchmarks(config, services);
    printTable(
      `Summary: medians of ${plural(config.rounds, 'round')}, ${os.cpus().length} CPUs, ` +
        `${((Date.now() - startedAt) / 1000).toFixed(0)} s in all`,
      ['benchmark', 'metric', 'median'],
      summaries.flatMap(({ bench, median }) =>
        Object.entries(median).map(([key, value]) => [bench, key, value.toLocaleString('en-US')]),
      ),
    );
    return 0;
  } catch (error) {
    if (interrupted) return SIGNAL_EXIT_CODES[interrupted];
    log(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  } finally {
    await stops.runAll();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
