import type { ExportRunInfo } from '../destination.types';
import { S3KeyTemplateError } from './s3.errors';

// S3 keys as products/batch_exports/backend/temporal/destinations/s3_batch_export.py builds them,
// so a bucket PostHog wrote and one hogbase writes have the same layout.

export type S3FileFormat = 'JSONLines' | 'Parquet';
export type S3Compression = 'gzip' | 'brotli' | 'zstd' | 'snappy' | 'lz4';

const FILE_FORMAT_EXTENSIONS: Record<S3FileFormat, string> = { JSONLines: 'jsonl', Parquet: 'parquet' };

const COMPRESSION_EXTENSIONS: Record<S3Compression, string> = {
  gzip: 'gz',
  brotli: 'br',
  zstd: 'zst',
  snappy: 'sz',
  lz4: 'lz4',
};

export interface S3KeyOptions {
  prefix: string;
  fileFormat: S3FileFormat;
  compression: S3Compression | null;
  fileNumber: number | null;
}

/** Python's `datetime.isoformat()` of an aware UTC datetime: PostHog's interval bounds in keys. */
export function pythonIsoFormat(date: Date): string {
  const iso = date.toISOString();
  const milliseconds = date.getUTCMilliseconds();
  const seconds = iso.slice(0, 19);
  return milliseconds === 0
    ? `${seconds}+00:00`
    : `${seconds}.${String(milliseconds).padStart(3, '0')}000+00:00`;
}

/** As PostHog's `get_allowed_template_variables`. */
export function s3TemplateVariables(run: ExportRunInfo): Record<string, string> {
  const end = run.dataIntervalEnd;
  const pad = (value: number): string => String(value).padStart(2, '0');
  return {
    year: String(end.getUTCFullYear()).padStart(4, '0'),
    month: pad(end.getUTCMonth() + 1),
    day: pad(end.getUTCDate()),
    hour: pad(end.getUTCHours()),
    minute: pad(end.getUTCMinutes()),
    second: pad(end.getUTCSeconds()),
    data_interval_start: intervalStartName(run),
    data_interval_end: pythonIsoFormat(end),
    table: run.model,
  };
}

/**
 * Python's `str.format(**variables)` for plain `{name}` fields; refuses what PostHog's raises on, and
 * conversions, specs and attributes, which half-supported would write keys PostHog would not.
 */
export function formatPythonTemplate(template: string, variables: Record<string, string>): string {
  let output = '';
  let index = 0;
  while (index < template.length) {
    const character = template[index];
    if (character === '{') {
      if (template[index + 1] === '{') {
        output += '{';
        index += 2;
        continue;
      }
      const close = template.indexOf('}', index + 1);
      if (close === -1) {
        throw new S3KeyTemplateError(`the prefix "${template}" has a "{" that is never closed`);
      }
      const field = template.slice(index + 1, close);
      if (field === '') {
        throw new S3KeyTemplateError(
          `the prefix "${template}" has an empty "{}" field; use one of ${knownNames(variables)}`,
        );
      }
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) {
        throw new S3KeyTemplateError(
          `the prefix "${template}" has the field "{${field}}"; only plain names are supported: ${knownNames(variables)}`,
        );
      }
      const value = variables[field];
      if (value === undefined) {
        throw new S3KeyTemplateError(
          `the prefix "${template}" uses the unknown variable "{${field}}"; known variables: ${knownNames(variables)}`,
        );
      }
      output += value;
      index = close + 1;
      continue;
    }
    if (character === '}') {
      if (template[index + 1] === '}') {
        output += '}';
        index += 2;
        continue;
      }
      throw new S3KeyTemplateError(
        `the prefix "${template}" has a single "}" (write "}}" for a literal brace)`,
      );
    }
    output += character;
    index += 1;
  }
  return output;
}

/** `posixpath.join(prefix.format(**vars), file_name)`, without a leading `/`. */
export function s3ObjectKey(run: ExportRunInfo, options: S3KeyOptions): string {
  const fileNumber = options.fileNumber === null ? '' : `-${options.fileNumber}`;
  const compression = options.compression === null ? '' : `.${COMPRESSION_EXTENSIONS[options.compression]}`;
  const fileName = `${baseFileName(run)}${fileNumber}.${FILE_FORMAT_EXTENSIONS[options.fileFormat]}${compression}`;
  return relativeToRoot(posixJoin(formatPythonTemplate(options.prefix, s3TemplateVariables(run)), fileName));
}

/**
 * NOTE: PostHog's `get_manifest_key` keeps a leading `/` that its data keys lose; here both are
 * stripped alike, so the manifest sits next to the files it lists.
 */
export function s3ManifestKey(run: ExportRunInfo, prefix: string): string {
  const fileName = `${baseFileName(run)}_manifest.json`;
  return relativeToRoot(posixJoin(formatPythonTemplate(prefix, s3TemplateVariables(run)), fileName));
}

function baseFileName(run: ExportRunInfo): string {
  return `${intervalStartName(run)}-${pythonIsoFormat(run.dataIntervalEnd)}`;
}

function intervalStartName(run: ExportRunInfo): string {
  return run.dataIntervalStart === null ? 'None' : pythonIsoFormat(run.dataIntervalStart);
}

function knownNames(variables: Record<string, string>): string {
  return Object.keys(variables)
    .map((name) => `{${name}}`)
    .join(', ');
}

export function posixJoin(head: string, tail: string): string {
  if (tail.startsWith('/')) return tail;
  if (head === '' || head.endsWith('/')) return head + tail;
  return `${head}/${tail}`;
}

/** `posixpath.relpath(key, "/")` for an absolute key, as PostHog applies it; a relative key stays. */
function relativeToRoot(key: string): string {
  if (!key.startsWith('/')) return key;
  const segments: string[] = [];
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  return segments.length === 0 ? '.' : segments.join('/');
}
