import type { EgressFetch } from '@hogbase/egress';
import { AppInstallError } from './app-install.error';
import { stripUrlSecrets } from './app-url.util';

export interface BoundedFetchOptions {
  fetch: EgressFetch;
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
  /** What is being fetched, for messages: `the archive`, `the latest version`. */
  what: string;
}

/** The size bound is enforced while reading; messages name the URL without its query string (tokens live there). */
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

/** Registry and API answers. */
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

/** Node's fetch says "fetch failed"; the cause says why. Duck-typed: `instanceof` fails across realms. */
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
