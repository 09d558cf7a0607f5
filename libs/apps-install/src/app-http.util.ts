import type { EgressFetch } from '@hogbase/egress';
import { AppInstallError } from './app-install.error';
import { stripUrlSecrets } from './app-url.parser';

export interface BoundedFetchOptions {
  /** Checks every connection and redirect (see `@hogbase/egress`). */
  fetch: EgressFetch;
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
  /** What is being fetched, for messages: `the archive`, `the latest version`. */
  what: string;
}

/**
 * GET with redirects followed (each one checked by the egress fetch), a deadline over the whole exchange (body included) and a size
 * bound enforced while reading, not after. Every failure is an {@link AppInstallError} whose
 * message names the URL without its query string (tokens live there).
 */
export async function fetchBytes(url: string, options: BoundedFetchOptions): Promise<Uint8Array> {
  const shownUrl = stripUrlSecrets(url);
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await options.fetch(url, { headers: options.headers, redirect: 'follow', signal });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new AppInstallError(
        `Could not download ${options.what} from ${shownUrl}: HTTP ${response.status}`,
      );
    }
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(options, shownUrl);
    }
    if (!response.body) return new Uint8Array(0);
    // Node types the web stream loosely; fetch bodies are byte streams.
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    let received = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > options.maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(options, shownUrl);
      }
      chunks.push(value);
    }
    return new Uint8Array(Buffer.concat(chunks));
  } catch (error) {
    if (error instanceof AppInstallError) throw error;
    if (signal.aborted) {
      throw new AppInstallError(
        `Could not download ${options.what} from ${shownUrl}: no complete answer within ${options.timeoutMs} ms`,
      );
    }
    throw new AppInstallError(`Could not download ${options.what} from ${shownUrl}: ${networkReason(error)}`);
  }
}

/** A JSON document (registry and API answers), bounded to 1 MiB. */
export async function fetchJson(
  url: string,
  options: Omit<BoundedFetchOptions, 'maxBytes'>,
): Promise<unknown> {
  const bytes = await fetchBytes(url, { ...options, maxBytes: 1024 * 1024 });
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch {
    throw new AppInstallError(`${stripUrlSecrets(url)} did not answer with JSON`);
  }
}

function tooLarge(options: BoundedFetchOptions, shownUrl: string): AppInstallError {
  return new AppInstallError(
    `Could not download ${options.what} from ${shownUrl}: it is larger than ${options.maxBytes} bytes`,
  );
}

/**
 * Node's fetch says only "fetch failed"; the useful part (ECONNREFUSED, ENOTFOUND) is in `cause`.
 * Duck-typed: the error comes from Node's realm, where `instanceof Error` of another realm fails.
 */
function networkReason(error: unknown): string {
  const { message, cause } = (error ?? {}) as {
    message?: unknown;
    cause?: { code?: unknown; message?: unknown };
  };
  if (cause && typeof cause.message === 'string') {
    return typeof cause.code === 'string' ? `${cause.code} (${cause.message})` : cause.message;
  }
  return typeof message === 'string' ? message : String(error);
}
