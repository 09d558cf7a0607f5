import type { NextFunction, Request, Response } from 'express';

const PUBLIC_ORIGIN = Symbol('publicOrigin');

type RequestWithOrigin = Request & { [PUBLIC_ORIGIN]?: string };

/**
 * The origin of the API's absolute links. SECURITY: a link built from the client's `Host` would
 * send the next request, and its key, wherever a client or a poisoned cache said; unless proxies
 * are trusted, links use SITE_URL's origin.
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

export function publicRequestUrl(request: Request): URL {
  const origin = (request as RequestWithOrigin)[PUBLIC_ORIGIN];
  if (!origin) throw new Error('publicOriginMiddleware is not installed');
  return new URL(request.originalUrl, origin);
}
