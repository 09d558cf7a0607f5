import { DESTINATION_SECRET_KEYS } from '@hogbase/batch-exports';
import { validationError } from '../common/api.error';

export const SUPPORTED_DESTINATIONS = ['S3', 'Postgres', 'HTTP', 'NoOp'] as const;
export type DestinationType = (typeof SUPPORTED_DESTINATIONS)[number];

/** PostHog's other types: a clear 400 rather than an export that can never run. */
const UNSUPPORTED_DESTINATIONS = ['Snowflake', 'BigQuery', 'Redshift', 'Databricks', 'AzureBlob'];

/** Config keys never returned by the API (PostHog's per-type list), kept on PATCH when omitted. */
export const SECRET_CONFIG_KEYS: Record<DestinationType, readonly string[]> = DESTINATION_SECRET_KEYS;

/** Hidden whatever the export's type: a config may hold another type's keys. */
const ANY_TYPE_SECRET_KEYS = new Set(Object.values(SECRET_CONFIG_KEYS).flat());
/** Names that say "secret" in any spelling, for keys no type lists (PostHog's other types use these). */
const SECRET_KEY_NAME = /password|secret|token|private_key|passphrase|access_key|api_key|credential/i;
/** SecretBox's sealed text (`v1.<key id>.<iv>.<ciphertext>`): never echoed, not even sealed. */
const SEALED_VALUE = /^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+$/;

/**
 * The keys that decide who receives the data and the stored secrets (see `checkTargetChange`).
 * `has_self_signed_cert` counts: without certificate checks anyone on the path is the target.
 */
const TARGET_CONFIG_KEYS: Record<DestinationType, readonly string[]> = {
  S3: ['endpoint_url', 'bucket_name', 'region', 'use_virtual_style_addressing'],
  Postgres: ['host', 'port', 'database', 'has_self_signed_cert'],
  HTTP: ['url'],
  NoOp: [],
};

/** What an absent target key means at run time (libs/batch-exports/src/destinations). */
const TARGET_DEFAULTS: Readonly<Record<string, unknown>> = {
  region: 'us-east-1',
  use_virtual_style_addressing: false,
  port: 5432,
  has_self_signed_cert: false,
};

export const S3_FILE_FORMATS = ['JSONLines', 'Parquet'] as const;
/** What this server can write; PostHog also lists lz4 for Parquet. */
export const S3_COMPRESSIONS: Record<(typeof S3_FILE_FORMATS)[number], readonly string[]> = {
  JSONLines: ['gzip', 'brotli', 'zstd'],
  Parquet: ['zstd', 'snappy', 'gzip'],
};

const REQUIRED_CONFIG_KEYS: Record<DestinationType, readonly string[]> = {
  S3: ['bucket_name', 'region'],
  Postgres: ['host', 'database', 'user', 'password', 'table_name'],
  HTTP: ['url', 'token'],
  NoOp: [],
};

export interface DestinationPolicy {
  /** BATCH_EXPORT_S3_SERVER_CREDENTIALS: an S3 export may run with the server's own AWS identity. */
  s3ServerCredentials: boolean;
}

const S3_KEYS = ['aws_access_key_id', 'aws_secret_access_key'] as const;

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

/** Checks a destination's merged config and fills the defaults; returns the config to store. */
export function validateDestinationConfig(
  type: DestinationType,
  config: Record<string, unknown>,
  policy: DestinationPolicy,
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
    checkS3Keys(checked, policy);
  }
  if (type === 'HTTP') checkUrl(checked.url, 'url');
  if (type === 'Postgres') {
    checkPostgresHost(checked.host);
    const port = checked.port ?? 5432;
    if (!Number.isInteger(Number(port)) || Number(port) < 1 || Number(port) > 65535) {
      throw validationError('port must be a TCP port number.', 'destination');
    }
    checked.port = Number(port);
  }
  return checked;
}

/**
 * Persons come as JSON lines in a fixed shape: only S3 JSONLines and Postgres take them; HTTP
 * sends events, and Parquet and HogQL columns exist for the events query only.
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

/**
 * SECURITY: an S3 client without keys signs with the server's default credential chain, letting
 * any member write wherever the operator's identity reaches. Keys are required unless the operator
 * lends that identity on purpose; one key without the other is refused (as botocore does).
 */
function checkS3Keys(config: Record<string, unknown>, policy: DestinationPolicy): void {
  const missing = S3_KEYS.filter((key) => !isPresent(config[key]));
  if (missing.length === 0) return;
  if (missing.length === S3_KEYS.length && policy.s3ServerCredentials) return;
  throw validationError(
    missing.length === S3_KEYS.length
      ? `The S3 destination needs ${missing.join(', ')} in its config: this server does not lend its own AWS credentials to exports.`
      : `The S3 destination needs ${missing.join(', ')} in its config: aws_access_key_id and aws_secret_access_key go together.`,
    'destination',
  );
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

/** node-postgres reads a host with a `/` as a Unix socket directory: the server's own Postgres. */
function checkPostgresHost(host: unknown): void {
  if (typeof host !== 'string' || /[/\\\s\u0000-\u001f]/.test(host)) {
    throw validationError(
      'host must be a host name or an IP address (not a Unix socket path).',
      'destination',
    );
  }
}

/**
 * The config a PATCH stores. Another type starts from the request alone, so no old secret carries
 * over; the same type merges as PostHog does, keeping omitted secrets unless the target changes.
 */
export function patchedDestinationConfig(
  stored: { type: string; config: Record<string, unknown> },
  type: DestinationType,
  requested: Record<string, unknown>,
  policy: DestinationPolicy,
): Record<string, unknown> {
  if (type !== stored.type) return validateDestinationConfig(type, requested, policy);
  const merged = validateDestinationConfig(type, { ...stored.config, ...requested }, policy);
  checkTargetChange(type, stored.config, merged, requested);
  return merged;
}

/**
 * A PATCH that points an export at a new target must carry the stored secrets again (a 400
 * otherwise). Refused rather than cleared: an S3 export without keys could fall back to the
 * server's credentials, and an emptied password looks saved to the member who changed it.
 */
function checkTargetChange(
  type: DestinationType,
  stored: Record<string, unknown>,
  merged: Record<string, unknown>,
  requested: Record<string, unknown>,
): void {
  const changed = TARGET_CONFIG_KEYS[type].filter(
    (key) => JSON.stringify(targetValue(stored, key)) !== JSON.stringify(targetValue(merged, key)),
  );
  if (changed.length === 0) return;
  const missing = SECRET_CONFIG_KEYS[type].filter(
    (key) => isPresent(stored[key]) && !isPresent(requested[key]),
  );
  if (missing.length === 0) return;
  throw validationError(
    `Changing ${changed.join(', ')} needs ${missing.join(', ')} in the same request: the stored ${missing.length === 1 ? 'secret is' : 'secrets are'} not sent to a new target.`,
    'destination',
  );
}

/** A target key as a run reads it: absent means its default, and a port may come as text. */
function targetValue(config: Record<string, unknown>, key: string): unknown {
  const value = isPresent(config[key]) ? config[key] : TARGET_DEFAULTS[key];
  return key === 'port' && value !== undefined ? Number(value) : value;
}

/** The config as the API shows it: no secret key of any type, no sealed value, at any depth. */
export function publicConfig(config: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (ANY_TYPE_SECRET_KEYS.has(key) || SECRET_KEY_NAME.test(key)) continue;
    if (typeof value === 'string' && SEALED_VALUE.test(value)) continue;
    shown[key] = isPlainObject(value) ? publicConfig(value) : value;
  }
  return shown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
