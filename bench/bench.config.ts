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
export const EXPORT_FORMATS = ['JSONLines', 'Parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export type BenchmarkName = (typeof BENCHMARKS)[number];
/** See bench/README.md (`BENCH_LISTING_LOAD`); `scattered` is a worst case ingestion never produces. */
export const LISTING_LOADS = ['arrival', 'scattered'] as const;
export type ListingLoad = (typeof LISTING_LOADS)[number];

/** The `BENCH_*` options in bench/README.md. */
export interface BenchConfig {
  benchmarks: BenchmarkName[];
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  eventsPerBatch: number;
  persons: number;
  ingestionEvents: number;
  appsEvents: number;
  lagBatchesPerSecond: number;
  lagSeconds: number;
  cpuProfileDir: string | undefined;
  listingSizes: number[];
  listingRequests: number;
  listingLoad: ListingLoad;
  exportEvents: number;
  exportFormats: ExportFormat[];
  s3Endpoint: string | undefined;
  databaseUrl: string | undefined;
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
