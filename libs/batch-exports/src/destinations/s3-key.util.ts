import type { ExportRunInfo } from '../destination.types';

/**
 * S3 object keys as PostHog builds them (posthog `s3_batch_export.py`: `get_s3_key`,
 * `get_manifest_key`, `get_allowed_template_variables`), so a bucket written by PostHog and one
 * written by hogbase have the same layout.
 */

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

/** A prefix that Python's `str.format` would refuse (PostHog's run fails with `InvalidS3Key`). */
export class S3KeyTemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'S3KeyTemplateError';
  }
}

export interface S3KeyOptions {
  prefix: string;
  fileFormat: S3FileFormat;
  compression: S3Compression | null;
  /** Set when `max_file_size_mb` is: the file number (from 0) goes into every data file's name. */
  fileNumber: number | null;
}

/**
 * Python's `datetime.isoformat()` of an aware UTC datetime: `2023-07-20T00:00:00+00:00`, with
 * microseconds only when there are any. PostHog passes interval bounds around as these strings.
 */
export function pythonIsoFormat(date: Date): string {
  const iso = date.toISOString(); // 2023-07-20T00:00:00.000Z
  const milliseconds = date.getUTCMilliseconds();
  const seconds = iso.slice(0, 19);
  return milliseconds === 0
    ? `${seconds}+00:00`
    : `${seconds}.${String(milliseconds).padStart(3, '0')}000+00:00`;
}

/** The names a prefix may use, as PostHog's `get_allowed_template_variables` defines them. */
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
 * Python's `str.format(**variables)` for plain `{name}` fields, with `{{` and `}}` as literal
 * braces. PostHog raises on an unknown name (KeyError), on positional `{}` and on a stray brace;
 * so does this. Conversions (`{x!r}`), format specs (`{x:>4}`) and attribute access (`{x.y}`) are
 * refused too: nobody needs them in a key, and half-supporting them would write keys PostHog would not.
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

/** A data object's key: `posixpath.join(prefix.format(**vars), file_name)`, without a leading `/`. */
export function s3ObjectKey(run: ExportRunInfo, options: S3KeyOptions): string {
  const fileNumber = options.fileNumber === null ? '' : `-${options.fileNumber}`;
  const compression = options.compression === null ? '' : `.${COMPRESSION_EXTENSIONS[options.compression]}`;
  const fileName = `${baseFileName(run)}${fileNumber}.${FILE_FORMAT_EXTENSIONS[options.fileFormat]}${compression}`;
  return relativeToRoot(posixJoin(formatPythonTemplate(options.prefix, s3TemplateVariables(run)), fileName));
}

/**
 * The manifest's key: `{start}-{end}_manifest.json` beside the data objects.
 * NOTE: PostHog's `get_manifest_key` does not strip a leading `/` (a prefix `/exports` puts the
 * manifest under the literal key `/exports/…` while the data goes to `exports/…`); here both are
 * stripped alike, so the manifest sits next to the files it lists.
 */
export function s3ManifestKey(run: ExportRunInfo, prefix: string): string {
  const fileName = `${baseFileName(run)}_manifest.json`;
  return relativeToRoot(posixJoin(formatPythonTemplate(prefix, s3TemplateVariables(run)), fileName));
}

function baseFileName(run: ExportRunInfo): string {
  return `${intervalStartName(run)}-${pythonIsoFormat(run.dataIntervalEnd)}`;
}

/** A run of everything before `end` has no start: Python formats that None as `None`. */
function intervalStartName(run: ExportRunInfo): string {
  return run.dataIntervalStart === null ? 'None' : pythonIsoFormat(run.dataIntervalStart);
}

function knownNames(variables: Record<string, string>): string {
  return Object.keys(variables)
    .map((name) => `{${name}}`)
    .join(', ');
}

/** `posixpath.join(a, b)`: b wins when absolute; one `/` between them unless a is empty or ends in `/`. */
export function posixJoin(head: string, tail: string): string {
  if (tail.startsWith('/')) return tail;
  if (head === '' || head.endsWith('/')) return head + tail;
  return `${head}/${tail}`;
}

/**
 * `posixpath.relpath(key, "/")` for an absolute key (what PostHog applies then): the path is
 * normalized (`//`, `.` and `..` collapse) and the leading `/` goes. A relative key stays as is.
 */
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
