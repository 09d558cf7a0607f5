import { setTimeout as sleep } from 'node:timers/promises';
import { createEgressFetch, egressRefusalOf, EgressPolicy, type EgressFetch } from '@hogbase/egress';
import { NonRetryableExportError } from '../batch-export.errors';
import {
  type DestinationWriter,
  type ExportChunk,
  type ExportRunInfo,
  type ExportedEventRow,
  type WriteResult,
} from '../destination.types';
import { DestinationConfigReader, JsonLinesReader } from './destination.util';

export interface HttpDestinationConfig {
  url: string;
  token: string;
}

export interface HttpDestinationOptions {
  /** Events per request; PostHog's BATCH_EXPORT_HTTP_BATCH_SIZE is 5,000. */
  batchSize: number;
  maxBodyBytes: number;
  /** Then the chunk fails, and the run retries later from its cursor. */
  maxAttempts: number;
  /** Doubled each attempt up to `maxBackoffMs`. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** A longer Retry-After fails the chunk instead of waiting. */
  maxRetryAfterMs: number;
  requestTimeoutMs: number;
}

export const DEFAULT_HTTP_DESTINATION_OPTIONS: HttpDestinationOptions = {
  batchSize: 5_000,
  // NOTE: PostHog flushes past 50 MB, but capture (PostHog's and ours) refuses /batch/ bodies over 20 MiB.
  maxBodyBytes: 20 * 1024 * 1024,
  maxAttempts: 6,
  initialBackoffMs: 500,
  maxBackoffMs: 30_000,
  maxRetryAfterMs: 120_000,
  requestTimeoutMs: 60_000,
};

const RESPONSE_EXCERPT_CHARS = 300;
const RESPONSE_READ_BYTES = 4 * 1024;

export function parseHttpDestinationConfig(config: Record<string, unknown>): HttpDestinationConfig {
  const reader = new DestinationConfigReader('HTTP', config);
  const url = reader.requiredString('url');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new NonRetryableExportError(`HTTP destination: config.url is not a URL: ${url}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new NonRetryableExportError(`HTTP destination: config.url must be http(s), not ${parsed.protocol}`);
  }
  return { url, token: reader.requiredString('token') };
}

/**
 * PostHog's migration export (products/batch_exports/backend/temporal/destinations/http_batch_export.py):
 * events POSTed to a `/batch/` endpoint with `historical_migration`. Receivers deduplicate by uuid,
 * so a run resumes after its cursor.
 */
export class HttpDestinationWriter implements DestinationWriter {
  readonly format = 'JSONEachRow';
  readonly resumable = true;
  readonly maxChunkRows = 10_000;

  private readonly header: Buffer;
  private readonly footer = Buffer.from(']}');
  private readonly separator = Buffer.from(',');

  constructor(
    private readonly config: HttpDestinationConfig,
    private readonly options: HttpDestinationOptions = DEFAULT_HTTP_DESTINATION_OPTIONS,
    private readonly fetch: EgressFetch = strictFetch(),
  ) {
    this.header = Buffer.from(
      `{"api_key":${JSON.stringify(config.token)},"historical_migration":true,"batch":[`,
    );
  }

  async write(chunk: ExportChunk, signal: AbortSignal): Promise<WriteResult> {
    signal.throwIfAborted();
    const reader = new JsonLinesReader(chunk.body);
    let sentBytes = 0;
    let parts: Buffer[] = [];
    let bodyBytes = 0;
    let events = 0;
    const send = async (): Promise<void> => {
      const body = Buffer.concat([this.header, ...parts, this.footer]);
      parts = [];
      bodyBytes = 0;
      events = 0;
      await this.post(body, signal);
      sentBytes += body.length;
    };
    try {
      for await (const row of reader.rows()) {
        const event = Buffer.from(JSON.stringify(toCaptureEvent(row)));
        const overhead = this.header.length + this.footer.length + this.separator.length;
        if (events > 0 && overhead + bodyBytes + event.length > this.options.maxBodyBytes) await send();
        if (events > 0) {
          parts.push(this.separator);
          bodyBytes += this.separator.length;
        }
        parts.push(event);
        bodyBytes += event.length;
        events += 1;
        if (events >= this.options.batchSize) await send();
      }
      if (events > 0) await send();
    } catch (error) {
      chunk.body.destroy();
      throw error;
    }
    return { bytes: sentBytes };
  }

  finish(signal: AbortSignal): Promise<WriteResult> {
    signal.throwIfAborted();
    return Promise.resolve({ bytes: 0 });
  }

  abort(): Promise<void> {
    return Promise.resolve();
  }

  /** Retries 5xx, 429 and network failures. */
  private async post(body: Buffer, signal: AbortSignal): Promise<void> {
    const target = new URL(this.config.url).host;
    let lastFailure = '';
    for (let attempt = 1; attempt <= this.options.maxAttempts; attempt += 1) {
      signal.throwIfAborted();
      let waitMs = backoff(attempt, this.options);
      try {
        const response = await this.fetch(this.config.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body,
          // A redirected POST would lose its body or go to an address nobody configured.
          redirect: 'manual',
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.requestTimeoutMs)]),
        });
        if (response.ok) {
          await response.body?.cancel().catch(() => undefined);
          return;
        }
        const excerpt = (await readStart(response, RESPONSE_READ_BYTES)).slice(0, RESPONSE_EXCERPT_CHARS);
        if (response.status === 429 || response.status >= 500) {
          lastFailure = `HTTP ${response.status}`;
          const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
          if (retryAfterMs !== undefined) {
            if (retryAfterMs > this.options.maxRetryAfterMs) {
              throw new Error(
                `HTTP destination ${target} answered ${response.status} with Retry-After of ` +
                  `${Math.round(retryAfterMs / 1000)} s: the run will retry later`,
              );
            }
            waitMs = retryAfterMs;
          }
        } else {
          const location = response.headers.get('location')?.slice(0, RESPONSE_EXCERPT_CHARS);
          throw new NonRetryableExportError(
            `HTTP destination ${target} answered ${response.status}` +
              (location ? ` (redirect to ${location}: set the url to the final address)` : '') +
              (excerpt ? `: ${excerpt}` : ''),
          );
        }
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const refusal = egressRefusalOf(error);
        if (refusal) throw new NonRetryableExportError(`HTTP destination: ${refusal.message}`);
        if (error instanceof NonRetryableExportError || !isNetworkFailure(error)) throw error;
        lastFailure = describeNetworkFailure(error);
      }
      if (attempt < this.options.maxAttempts) await sleep(waitMs, undefined, { signal });
    }
    throw new Error(
      `HTTP destination ${target}: no 2xx after ${this.options.maxAttempts} attempts (last: ${lastFailure})`,
    );
  }
}

let strictEgressFetch: EgressFetch | undefined;

function strictFetch(): EgressFetch {
  strictEgressFetch ??= createEgressFetch(EgressPolicy.strict());
  return strictEgressFetch;
}

async function readStart(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < maxBytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}

/** Same keys and order as PostHog's HTTP export. */
export function toCaptureEvent(row: ExportedEventRow): Record<string, unknown> {
  const properties: Record<string, unknown> = { ...(row.properties ?? {}) };
  // PostHog sends $set / $set_once in properties: a row whose properties lack them gets them from the columns.
  if (row.set != null && properties.$set === undefined) properties.$set = row.set;
  if (row.set_once != null && properties.$set_once === undefined) properties.$set_once = row.set_once;
  // The events were located when first ingested: the receiver must not look the ip up again.
  properties.$geoip_disable = true;
  if (row.event === '$autocapture' && row.elements_chain != null) {
    properties.$elements_chain = row.elements_chain;
  }
  return {
    uuid: row.uuid,
    distinct_id: row.distinct_id,
    timestamp: row.timestamp,
    event: row.event,
    properties,
  };
}

function backoff(attempt: number, options: HttpDestinationOptions): number {
  const capped = Math.min(options.maxBackoffMs, options.initialBackoffMs * 2 ** (attempt - 1));
  // Jitter: the retries of many runs against one receiver spread out.
  return Math.round(capped * (0.75 + Math.random() * 0.25));
}

/** Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** By name: fetch's errors come from Node's own realm, where `instanceof` fails. */
function isNetworkFailure(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'TypeError' || name === 'TimeoutError';
}

function describeNetworkFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const detail =
    typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail ? `${error.message} (${detail})` : error.message;
}

/** `fetch` goes where the egress policy lets it (public targets by default). */
export function createHttpDestination(
  config: Record<string, unknown>,
  run: ExportRunInfo,
  options: HttpDestinationOptions = DEFAULT_HTTP_DESTINATION_OPTIONS,
  fetch: EgressFetch = strictFetch(),
): DestinationWriter {
  if (run.model !== 'events') {
    throw new NonRetryableExportError(
      `HTTP destination: the ${run.model} model is not supported, only events`,
    );
  }
  return new HttpDestinationWriter(parseHttpDestinationConfig(config), options, fetch);
}
