import type { NextFunction, Request, Response } from 'express';

const PUBLIC_ORIGIN = Symbol('publicOrigin');

type RequestWithOrigin = Request & { [PUBLIC_ORIGIN]?: string };

/**
 * Decides, once per request, the scheme and host of the absolute links the API answers with
 * (pagination `next`/`previous`, activity pages). TRICKY: the `Host` header is the client's to
 * choose; a link built from it sends the next request (and its key) wherever the client, or a
 * poisoned cache in front of us, said. Unless proxies are trusted (TRUST_PROXY, then Express reads
 * `X-Forwarded-Proto`/`-Host` from them), links use SITE_URL's origin.
 */
export function publicOriginMiddleware(options: { siteUrl: string; trustProxy: boolean }) {
  const siteOrigin = new URL(options.siteUrl).origin;
  return (request: Request, _response: Response, next: NextFunction): void => {
    const forwardedHost = options.trustProxy ? request.host : undefined;
    (request as RequestWithOrigin)[PUBLIC_ORIGIN] = forwardedHost
      ? `${request.protocol}://${forwardedHost}`
      : siteOrigin;
    next();
  };
}

/** The request's own URL made absolute on the public origin, for building links to other pages. */
export function publicRequestUrl(request: Request): URL {
  const origin = (request as RequestWithOrigin)[PUBLIC_ORIGIN];
  if (!origin) throw new Error('publicOriginMiddleware is not installed');
  return new URL(request.originalUrl, origin);
}
