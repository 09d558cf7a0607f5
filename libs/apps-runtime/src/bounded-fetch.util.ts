import type { SandboxFetch, SandboxFetchInit, SandboxFetchResponse } from '@hogbase/apps-sandbox';
import { createEgressFetch, egressRefusalOf, type EgressPolicy } from '@hogbase/egress';

export interface BoundedFetchOptions {
  /** The whole request, body included. */
  timeoutMs: number;
  maxResponseBytes: number;
  /** Every connection and every redirect is checked against it. */
  egress: EgressPolicy;
}

/** Refuses a body past `maxBytes` without reading it all. */
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
 * SECURITY: apps' `fetch` (and composeWebhook's): an app cannot reach the server's network, hang a
 * call on a slow server or fill the host's memory with a large answer.
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
