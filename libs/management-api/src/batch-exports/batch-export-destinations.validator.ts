import { DESTINATION_SECRET_KEYS } from '@hogbase/batch-exports';
import { validationError } from '../common/api.error';

/** Destination types this server exports to. */
export const SUPPORTED_DESTINATIONS = ['S3', 'Postgres', 'HTTP', 'NoOp'] as const;
export type DestinationType = (typeof SUPPORTED_DESTINATIONS)[number];

/** PostHog's other types: a clear 400 rather than an export that can never run. */
const UNSUPPORTED_DESTINATIONS = ['Snowflake', 'BigQuery', 'Redshift', 'Databricks', 'AzureBlob'];

/** Config keys never returned by the API (PostHog's per-type list), kept on PATCH when omitted. */
export const SECRET_CONFIG_KEYS: Record<DestinationType, readonly string[]> = DESTINATION_SECRET_KEYS;

/**
 * Hidden whatever the export's type: a config may hold another type's keys (a row written before
 * type changes dropped the old config, or a key a client sent under the wrong type).
 */
const ANY_TYPE_SECRET_KEYS = new Set(Object.values(SECRET_CONFIG_KEYS).flat());
/** Names that say "secret" in any spelling, for keys no type lists (PostHog's other types use these). */
const SECRET_KEY_NAME = /password|secret|token|private_key|passphrase|access_key|api_key|credential/i;
/** SecretBox's sealed text (`v1.<key id>.<iv>.<ciphertext>`): never echoed, not even sealed. */
const SEALED_VALUE = /^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+$/;

/**
 * The keys that decide who receives the data and the secrets sent with it. Changing one sends the
 * stored secrets somewhere new, so a PATCH that changes one must carry the secrets again (see
 * `checkTargetChange`). Region and bucket are S3 targets too: a bucket name (with the region, on
 * an S3-compatible server) picks whose storage the signed requests and the rows go to.
 * `has_self_signed_cert` turns certificate checks off, which lets anyone on the path be the target.
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

/** Keys each type needs before a run can reach the destination. */
const REQUIRED_CONFIG_KEYS: Record<DestinationType, readonly string[]> = {
  S3: ['bucket_name', 'region'],
  Postgres: ['host', 'database', 'user', 'password', 'table_name'],
  HTTP: ['url', 'token'],
  NoOp: [],
};

/** What the operator allows destinations (ManagementConfig). */
export interface DestinationPolicy {
  /**
   * BATCH_EXPORT_S3_SERVER_CREDENTIALS: an S3 export may leave out its keys and run with the
   * server's own AWS identity. Off, the keys are required.
   */
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

/**
 * Checks a destination's merged config (PostHog's messages where PostHog has them) and fills the
 * defaults. Returns the config to store.
 */
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

/**
 * SECURITY: an S3 client without keys signs with whatever the server's default chain finds
 * (environment, shared files, instance or container role): the operator's identity, which would
 * let any member write into any bucket that identity reaches. Keys are required unless the
 * operator lends that identity on purpose; one key without the other is never taken (the run
 * would refuse it, as botocore does).
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

/**
 * A host name or an IP address only. node-postgres reads a host with a `/` as the directory of a
 * Unix socket: a server's own local Postgres (the embedded one's, with its superuser) would be
 * the target.
 */
function checkPostgresHost(host: unknown): void {
  if (typeof host !== 'string' || /[/\\\s\u0000-\u001f]/.test(host)) {
    throw validationError(
      'host must be a host name or an IP address (not a Unix socket path).',
      'destination',
    );
  }
}

/**
 * The config a PATCH stores, from the stored one and the request's `destination`.
 *
 * - Another type starts from the request's config alone: nothing of the old type (its secrets
 *   above all) carries over to a type that would show or send it.
 * - The same type merges, as PostHog does: keys the request leaves out, the secrets the API never
 *   shows among them, are kept, unless the target changes (`checkTargetChange`).
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
 * A PATCH that points an export somewhere else (another host, URL, endpoint, bucket…) must carry
 * the type's stored secrets again, or it is a 400 naming both.
 *
 * NOTE: refused rather than cleared on purpose. Without its secrets an export does not simply stop:
 * an S3 export would run with the server's own credentials where BATCH_EXPORT_S3_SERVER_CREDENTIALS
 * allows them, and a silently emptied password leaves an export that the member who changed it
 * sees as saved.
 * Re-entering is what PostHog's form does anyway: it never shows the secrets, so its users type
 * them with the rest of the destination.
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

/**
 * The config as the API shows it: without any key that is a secret in any type (or says so in
 * its name), and without sealed values, at any depth.
 */
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
