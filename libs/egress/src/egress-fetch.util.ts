import { Agent, buildConnector, fetch as undiciFetch, type RequestInit as UndiciRequestInit } from 'undici';
import { egressRefusalOf, EgressRefusedError } from './egress.errors';
import type { EgressPolicy } from './egress-policy.service';

export type EgressFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface EgressFetchOptions {
  /** Redirects followed before the fetch fails (fetch's own limit is 20). */
  maxRedirects?: number;
  /** Certificates trusted besides the system's (a test's own CA). */
  ca?: string | Buffer;
}

const DEFAULT_MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that describe a body, dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-language',
  'content-location',
];
/** Credentials that stay with their origin (as fetch does on a cross-origin redirect). */
const ORIGIN_CREDENTIALS = ['authorization', 'proxy-authorization', 'cookie'];

/**
 * Checked in the connector, not a `lookup` hook: Node does no lookup for IP-literal hosts. TLS
 * still verifies the host, since undici takes the server name from the origin.
 */
export function egressDispatcher(policy: EgressPolicy, tls: { ca?: string | Buffer } = {}): Agent {
  const connect = buildConnector(tls.ca === undefined ? {} : { ca: tls.ca });
  return new Agent({
    connect: (options, callback) => {
      if (options.socketPath) {
        callback(new EgressRefusedError('socket paths are refused'), null);
        return;
      }
      const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
      policy.resolve(options.hostname, port).then(
        (target) => connect({ ...options, hostname: target.address }, callback),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
      );
    },
  });
}

/**
 * Follows redirects itself (with fetch's rules) so each hop is checked; a refusal rejects with the
 * {@link EgressRefusedError}, not `TypeError: fetch failed`.
 */
export function createEgressFetch(policy: EgressPolicy, options: EgressFetchOptions = {}): EgressFetch {
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const dispatcher = egressDispatcher(policy, { ca: options.ca });
  return async (input, init = {}) => {
    let url = new URL(String(input));
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers = new Headers(init.headers);
    const mode = init.redirect ?? 'follow';
    for (let redirects = 0; ; redirects += 1) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new EgressRefusedError(`${url.protocol} URLs are refused: only http and https`);
      }
      const response = await send(url, { ...init, method, headers, body, redirect: 'manual' }, dispatcher);
      const location = response.headers.get('location');
      if (mode === 'manual' || !REDIRECT_STATUSES.has(response.status) || location === null) return response;
      await response.body?.cancel().catch(() => undefined);
      if (mode === 'error') throw new TypeError(`${url.host} answered a redirect, and redirects are refused`);
      if (redirects >= maxRedirects)
        throw new TypeError(`more than ${maxRedirects} redirects from ${url.host}`);
      const next = new URL(location, url);
      if (next.origin !== url.origin) for (const name of ORIGIN_CREDENTIALS) headers.delete(name);
      const toGet = response.status === 303 ? method !== 'HEAD' : response.status <= 302 && method === 'POST';
      if (toGet) {
        method = 'GET';
        body = undefined;
        for (const name of BODY_HEADERS) headers.delete(name);
      } else if (body !== undefined && body !== null && typeof body === 'object' && 'getReader' in body) {
        throw new TypeError(
          `${url.host} redirected a request whose body was a stream, which cannot be sent again`,
        );
      }
      url = next;
    }
  };
}

async function send(url: URL, init: RequestInit, dispatcher: Agent): Promise<Response> {
  try {
    // NOTE: undici's own fetch: Node's global fetch bundles its own undici, which need not accept
    // a dispatcher of another version. The shapes are the same, so callers see the platform's type.
    const response: unknown = await undiciFetch(url, { ...(init as UndiciRequestInit), dispatcher });
    return response as Response;
  } catch (error) {
    throw egressRefusalOf(error) ?? error;
  }
}
