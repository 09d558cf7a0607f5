import { validationError } from '../common/api-error';

/** Destination types this server exports to. */
export const SUPPORTED_DESTINATIONS = ['S3', 'Postgres', 'HTTP', 'NoOp'] as const;
export type DestinationType = (typeof SUPPORTED_DESTINATIONS)[number];

/** PostHog's other types: a clear 400 rather than an export that can never run. */
const UNSUPPORTED_DESTINATIONS = ['Snowflake', 'BigQuery', 'Redshift', 'Databricks', 'AzureBlob'];

/** Config keys never returned by the API (PostHog's per-type list), kept on PATCH when omitted. */
export const SECRET_CONFIG_KEYS: Record<DestinationType, readonly string[]> = {
  S3: ['aws_access_key_id', 'aws_secret_access_key'],
  Postgres: ['user', 'password'],
  HTTP: ['token'],
  NoOp: [],
};

export const S3_FILE_FORMATS = ['JSONLines', 'Parquet'] as const;
/** What this server can write; PostHog also lists lz4 for Parquet. */
export const S3_COMPRESSIONS: Record<(typeof S3_FILE_FORMATS)[number], readonly string[]> = {
  JSONLines: ['gzip', 'brotli', 'zstd'],
  Parquet: ['zstd', 'snappy', 'gzip'],
};

/** Keys each type needs before a run can reach the destination. */
const REQUIRED_CONFIG_KEYS: Record<DestinationType, readonly string[]> = {
  S3: ['bucket_name', 'region'],
  Postgres: ['host', 'database', 'user', 'password', 'table_name'],
  HTTP: ['url', 'token'],
  NoOp: [],
};

const pythonList = (values: readonly string[]) => `[${values.map((value) => `'${value}'`).join(', ')}]`;

export function destinationType(type: unknown): DestinationType {
  if (typeof type === 'string' && (SUPPORTED_DESTINATIONS as readonly string[]).includes(type)) {
    return type as DestinationType;
  }
  if (typeof type === 'string' && UNSUPPORTED_DESTINATIONS.includes(type)) {
    throw validationError(
      `Destination type ${type} is not supported by this server. Supported types are ${pythonList(SUPPORTED_DESTINATIONS)}.`,
      'destination',
    );
  }
  throw validationError(`"${String(type)}" is not a valid choice.`, 'destination', 'invalid_choice');
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

function stringList(config: Record<string, unknown>, key: string): void {
  const value = config[key];
  if (value === undefined || value === null) return;
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw validationError(`${key} must be a list of event names.`, 'destination');
  }
}

/**
 * Checks a destination's merged config (PostHog's messages where PostHog has them) and fills the
 * defaults. Returns the config to store.
 */
export function validateDestinationConfig(
  type: DestinationType,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const checked = { ...config };
  const missing = REQUIRED_CONFIG_KEYS[type].filter((key) => !isPresent(checked[key]));
  if (missing.length > 0) {
    throw validationError(
      `The ${type} destination needs ${missing.join(', ')} in its config.`,
      'destination',
    );
  }
  stringList(checked, 'include_events');
  stringList(checked, 'exclude_events');

  if (type === 'S3') {
    const format = (checked.file_format ?? 'JSONLines') as string;
    if (!(S3_FILE_FORMATS as readonly string[]).includes(format)) {
      throw validationError(
        `File format ${format} is not supported. Supported file formats are ${pythonList(S3_FILE_FORMATS)}`,
        'destination',
      );
    }
    checked.file_format = format;
    const compression = checked.compression;
    if (isPresent(compression)) {
      const supported = S3_COMPRESSIONS[format as (typeof S3_FILE_FORMATS)[number]];
      if (typeof compression !== 'string' || !supported.includes(compression)) {
        throw validationError(
          `Compression ${String(compression)} is not supported for file format ${format}. Supported compressions are ${pythonList(supported)}`,
          'destination',
        );
      }
    }
    const maxFileSize = checked.max_file_size_mb;
    if (isPresent(maxFileSize) && !(Number.isInteger(maxFileSize) && (maxFileSize as number) >= 1)) {
      throw validationError(
        'max_file_size_mb must be a whole number of megabytes, at least 1.',
        'destination',
      );
    }
    if (isPresent(checked.endpoint_url)) checkUrl(checked.endpoint_url, 'endpoint_url');
  }
  if (type === 'HTTP') checkUrl(checked.url, 'url');
  if (type === 'Postgres') {
    const port = checked.port ?? 5432;
    if (!Number.isInteger(Number(port)) || Number(port) < 1 || Number(port) > 65535) {
      throw validationError('port must be a TCP port number.', 'destination');
    }
    checked.port = Number(port);
  }
  return checked;
}

/**
 * Persons are read from Postgres as JSON lines, in the persons model's fixed shape: S3 with
 * JSONLines and Postgres (which upserts by distinct id) take them; the HTTP destination sends
 * events (`/batch/` bodies), and Parquet and HogQL columns are built by the events query only.
 */
export function validateModelDestination(
  model: string,
  type: DestinationType,
  config: Record<string, unknown>,
  hogqlQuery: string | null,
): void {
  if (model !== 'persons') return;
  const jsonLines = (config.file_format ?? 'JSONLines') === 'JSONLines';
  if (!(type === 'Postgres' || type === 'NoOp' || (type === 'S3' && jsonLines))) {
    throw validationError(
      `The persons model can only be exported as JSONLines to S3 or to Postgres, not ${type === 'S3' ? `as ${String(config.file_format)} to S3` : `to ${type}`}.`,
      'model',
    );
  }
  if (hogqlQuery !== null) {
    throw validationError('A hogql_query applies to the events model only.', 'hogql_query');
  }
}

function checkUrl(value: unknown, key: string): void {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw validationError(`${key} must be an http or https URL.`, 'destination');
  }
}

/** The config as the API shows it: without the type's secret keys. */
export function publicConfig(type: string, config: Record<string, unknown>): Record<string, unknown> {
  const secrets = new Set(SECRET_CONFIG_KEYS[type as DestinationType] ?? []);
  return Object.fromEntries(Object.entries(config).filter(([key]) => !secrets.has(key)));
}
