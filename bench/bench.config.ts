import { ConfigError, readInteger, readString, readUrl, type Environment } from '@hogbase/config';

export const BENCHMARKS = [
  'batch',
  'capture',
  'ingestion',
  'lag',
  'listing',
  'flags',
  'exports',
  'apps',
  'standalone',
] as const;
/** What the exports benchmark writes to S3, beside its baseline. */
export const EXPORT_FORMATS = ['JSONLines', 'Parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export type BenchmarkName = (typeof BENCHMARKS)[number];
/**
 * How the listing bench loads a project's events: `arrival` in time order, as ingestion writes
 * them (older events in 1M-row inserts, the newest day in ingestion-sized inserts); `scattered`
 * in 1M-row inserts that each span the whole year (every month then holds overlapping parts that
 * FINAL has to merge: the worst case, which ingestion never produces).
 */
export const LISTING_LOADS = ['arrival', 'scattered'] as const;
export type ListingLoad = (typeof LISTING_LOADS)[number];

export interface BenchConfig {
  /** Which benchmarks run, in this order. */
  benchmarks: BenchmarkName[];
  /** Measured rounds per benchmark; every figure is the median over them. */
  rounds: number;
  /** Length of one autocannon round (capture benchmarks). */
  durationSeconds: number;
  /** Unmeasured load before the first round of each HTTP target (JIT, connections, caches). */
  warmupSeconds: number;
  /** Concurrent HTTP connections of the load generator. */
  connections: number;
  /** Events per posthog-node /batch/ request. */
  eventsPerBatch: number;
  /** Distinct ids the generated events are spread over (persons in ingestion). */
  persons: number;
  /** Events put on Kafka per ingestion round. */
  ingestionEvents: number;
  /** Events put on Kafka per apps round (each delivered as one webhook). */
  appsEvents: number;
  /** /batch/ requests per second during the end-to-end lag rounds. */
  lagBatchesPerSecond: number;
  /** Length of one end-to-end lag round. */
  lagSeconds: number;
  /** When set, the capture and ceiling processes write V8 CPU profiles (.cpuprofile) here. */
  cpuProfileDir: string | undefined;
  /** Events in the project at each size the listing is measured at, ascending. */
  listingSizes: number[];
  /** Timed requests per listing query per round. */
  listingRequests: number;
  /** How the listing's events are inserted: see LISTING_LOADS. */
  listingLoad: ListingLoad;
  /** Events in the hour the exports benchmark exports. */
  exportEvents: number;
  /** The S3 formats exported each round (JSONLines gzip, Parquet zstd), in this order. */
  exportFormats: ExportFormat[];
  /** An S3-compatible endpoint (path-style); else S3Mock is started for the run. */
  s3Endpoint: string | undefined;
  /** A PostgreSQL server whose role may CREATE DATABASE; else the machine's cluster 15/main. */
  databaseUrl: string | undefined;
  /** Kafka bootstrap brokers; else a single KRaft broker is started from the cached jars. */
  kafkaBrokers: string[] | undefined;
}

function readBenchmarks(args: readonly string[]): BenchmarkName[] {
  if (args.length === 0) return [...BENCHMARKS];
  for (const arg of args) {
    if (!(BENCHMARKS as readonly string[]).includes(arg)) {
      throw new ConfigError('argument', arg, `must be one of ${BENCHMARKS.join(', ')}`);
    }
  }
  return BENCHMARKS.filter((name) => args.includes(name));
}

function readSizes(env: Environment, name: string, fallback: number[]): number[] {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  const sizes = raw.split(',').map((size) => Number(size.trim()));
  if (sizes.length === 0 || sizes.some((size) => !Number.isSafeInteger(size) || size < 1_000)) {
    throw new ConfigError(name, raw, 'must be a comma list of event counts of at least 1000');
  }
  return sizes.sort((left, right) => left - right);
}

function readFormats(env: Environment, name: string): ExportFormat[] {
  const raw = readString(env, name);
  if (raw === undefined) return [...EXPORT_FORMATS];
  const formats = raw.split(',').map((format) => format.trim());
  if (formats.some((format) => !(EXPORT_FORMATS as readonly string[]).includes(format))) {
    throw new ConfigError(name, raw, `must be a comma list of ${EXPORT_FORMATS.join(', ')}`);
  }
  return EXPORT_FORMATS.filter((format) => formats.includes(format));
}

function readListingLoad(env: Environment, name: string): ListingLoad {
  const raw = readString(env, name) ?? 'arrival';
  if (!(LISTING_LOADS as readonly string[]).includes(raw)) {
    throw new ConfigError(name, raw, `must be one of ${LISTING_LOADS.join(', ')}`);
  }
  return raw as ListingLoad;
}

/** Read once at start-up: `npm run bench -- [batch] [capture] … [exports]` and BENCH_* knobs. */
export function loadBenchConfig(env: Environment, args: readonly string[]): BenchConfig {
  const brokers = readString(env, 'KAFKA_BROKERS')
    ?.split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
  return {
    benchmarks: readBenchmarks(args),
    rounds: readInteger(env, 'BENCH_ROUNDS', 3, 1),
    durationSeconds: readInteger(env, 'BENCH_DURATION_S', 5, 1),
    warmupSeconds: readInteger(env, 'BENCH_WARMUP_S', 2, 0),
    connections: readInteger(env, 'BENCH_CONNECTIONS', 10, 1),
    eventsPerBatch: readInteger(env, 'BENCH_BATCH_EVENTS', 50, 1),
    persons: readInteger(env, 'BENCH_PERSONS', 1_000, 1),
    ingestionEvents: readInteger(env, 'BENCH_INGEST_EVENTS', 20_000, 1_000),
    appsEvents: readInteger(env, 'BENCH_APPS_EVENTS', 20_000, 1_000),
    lagBatchesPerSecond: readInteger(env, 'BENCH_LAG_RATE', 10, 1),
    lagSeconds: readInteger(env, 'BENCH_LAG_S', 10, 1),
    cpuProfileDir: readString(env, 'BENCH_CPU_PROF_DIR'),
    listingSizes: readSizes(env, 'BENCH_LISTING_SIZES', [1_000_000, 10_000_000]),
    listingRequests: readInteger(env, 'BENCH_LISTING_REQUESTS', 15, 1),
    listingLoad: readListingLoad(env, 'BENCH_LISTING_LOAD'),
    exportEvents: readInteger(env, 'BENCH_EXPORT_EVENTS', 1_000_000, 1_000),
    exportFormats: readFormats(env, 'BENCH_EXPORT_FORMATS'),
    s3Endpoint: readUrl(env, 'S3_ENDPOINT', ['http', 'https'])?.origin,
    databaseUrl: readUrl(env, 'TEST_DATABASE_URL', ['postgres', 'postgresql'])?.toString(),
    kafkaBrokers: brokers && brokers.length > 0 ? brokers : undefined,
  };
}
