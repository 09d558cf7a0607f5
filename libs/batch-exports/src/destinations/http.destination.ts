import { setTimeout as sleep } from 'node:timers/promises';
import { createEgressFetch, egressRefusalOf, EgressPolicy, type EgressFetch } from '@hogbase/egress';
import {
  NonRetryableExportError,
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
  /** Request body bytes after which the batch is sent. */
  maxBodyBytes: number;
  /** Attempts per request before the chunk fails (the run then retries later, from its cursor). */
  maxAttempts: number;
  /** Back-off before the second attempt, doubled at each attempt up to `maxBackoffMs`. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** A Retry-After longer than this fails the chunk instead of waiting. */
  maxRetryAfterMs: number;
  /** One request's time limit (a request past it is retried). */
  requestTimeoutMs: number;
}

export const DEFAULT_HTTP_DESTINATION_OPTIONS: HttpDestinationOptions = {
  batchSize: 5_000,
  // NOTE: PostHog flushes past 50 MB, but PostHog's capture (and ours, CAPTURE_BATCH_BODY_LIMIT)
  // refuses /batch/ bodies over 20 MiB: a batch is sent before it would outgrow that.
  maxBodyBytes: 20 * 1024 * 1024,
  maxAttempts: 6,
  initialBackoffMs: 500,
  maxBackoffMs: 30_000,
  maxRetryAfterMs: 120_000,
  requestTimeoutMs: 60_000,
};

const RESPONSE_EXCERPT_CHARS = 300;
/** What is read of a refusing receiver's answer for its excerpt; the rest is never read. */
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
 * PostHog's migration export: the run's events POSTed to a PostHog `/batch/` endpoint as
 * `{"api_key", "historical_migration": true, "batch": [...]}` bodies, each event as PostHog's
 * `insert_into_http_activity` shapes it. Receivers deduplicate by uuid, so a chunk sent twice is
 * harmless and a run resumes after its cursor.
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
    /** Checks every connection against the egress policy (see createBatchExportDestinations). */
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
        // Sent before the event would push the body past the limit (an event alone is sent anyway).
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
    // What was POSTed is taken: nothing to undo.
    return Promise.resolve();
  }

  /** POSTs one body until a 2xx, retrying 5xx, 429 and network failures with capped back-off. */
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
          // A redirected POST would lose its body (301/302) or go to an address nobody configured.
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

/** Public targets only: what a writer gets when its creator passed no egress fetch. */
function strictFetch(): EgressFetch {
  strictEgressFetch ??= createEgressFetch(EgressPolicy.strict());
  return strictEgressFetch;
}

/** The first `maxBytes` of a body as text, the rest left unread (a receiver may answer anything). */
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
    // A body cut short still says what it said so far.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}

/** An event of the batch as PostHog's HTTP export writes it (same keys, same order). */
export function toCaptureEvent(row: ExportedEventRow): Record<string, unknown> {
  const properties: Record<string, unknown> = { ...(row.properties ?? {}) };
  // The rows carry $set / $set_once both inside properties and as columns: PostHog sends them in
  // properties, so a row whose properties lack them gets them back from the columns.
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
  // Jitter, so the retries of many runs against one receiver spread out.
  return Math.round(capped * (0.75 + Math.random() * 0.25));
}

/** Retry-After in seconds or as an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * fetch rejects with a TypeError for network failures, and with a TimeoutError past its time limit.
 * NOTE: compared by name: fetch's errors come from Node's own realm, where `instanceof` against
 * another realm's TypeError (a test sandbox's) fails.
 */
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

/**
 * A DestinationFactory; `options` (retries, batch size) are for tests. `fetch` goes where the egress
 * policy lets it (public targets only by default).
 */
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
