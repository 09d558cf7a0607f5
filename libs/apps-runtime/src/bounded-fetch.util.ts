import type { SandboxFetch, SandboxFetchInit, SandboxFetchResponse } from '@hogbase/apps-sandbox';
import { createEgressFetch, egressRefusalOf, type EgressPolicy } from '@hogbase/egress';

export interface BoundedFetchOptions {
  /** The whole request, body included. */
  timeoutMs: number;
  /** A larger response body fails the fetch (the app sees the error). */
  maxResponseBytes: number;
  /** Where the app may connect: every connection and every redirect is checked against it. */
  egress: EgressPolicy;
}

/** What `Response.text()` would give, but refusing a body past `maxBytes` without reading it all. */
async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw new Error(`the response is larger than ${maxBytes} bytes`);
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new Error(`the response is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The `fetch` apps get (and the host's composeWebhook delivery): fetch through the egress policy
 * (no loopback, private or link-local target unless allowed, each redirect checked), with a deadline
 * over the whole exchange and a bound on the response body, so an app cannot reach the server's
 * network, hang a call on a slow server or fill the host's memory with a large answer.
 */
export function boundedFetch(options: BoundedFetchOptions): SandboxFetch {
  const fetch = createEgressFetch(options.egress);
  return async (url: string, init: SandboxFetchInit): Promise<SandboxFetchResponse> => {
    const signal = AbortSignal.timeout(options.timeoutMs);
    try {
      const response = await fetch(url, {
        method: typeof init.method === 'string' ? init.method : 'GET',
        headers: init.headers,
        body: typeof init.body === 'string' ? init.body : undefined,
        redirect: 'follow',
        signal,
      });
      const body = await readBounded(response, options.maxResponseBytes);
      return { status: response.status, headers: Object.fromEntries(response.headers), body };
    } catch (error) {
      const refusal = egressRefusalOf(error);
      if (refusal) throw new Error(refusal.message);
      if (signal.aborted)
        throw new Error(`the request to ${new URL(url).host} timed out after ${options.timeoutMs} ms`);
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      throw new Error(cause ? `${(error as Error).message}: ${cause}` : (error as Error).message);
    }
  };
}
