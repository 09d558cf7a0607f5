import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api.error';

/**
 * Deepest JSON body accepted. Flag filters and payloads nest a handful of levels; past this a body
 * can only be an attack on the recursive code behind the parser (class-transformer, validators),
 * which would otherwise end in a stack overflow and a 500.
 */
export const MAX_BODY_DEPTH = 64;

/** Whether `value` nests objects or arrays deeper than `limit` levels; iterative, so any depth is safe to ask about. */
export function exceedsDepth(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let item = pending.pop(); item; item = pending.pop()) {
    const [node, depth] = item;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node as object)) {
      if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
    }
  }
  return false;
}

/** Refuses a parsed JSON body nested deeper than MAX_BODY_DEPTH with a 400 before any handler sees it. */
export function refuseDeepBodies(request: Request, _response: Response, next: NextFunction): void {
  const body: unknown = request.body;
  if (body !== null && typeof body === 'object' && exceedsDepth(body, MAX_BODY_DEPTH)) {
    next(new ApiError('invalid_input', `JSON nesting is deeper than ${MAX_BODY_DEPTH} levels.`));
    return;
  }
  next();
}

/**
 * Headers every answer of the management API carries: no MIME sniffing of JSON, no framing, no
 * referrer leaking a URL with ids, and HSTS once the request came over TLS (directly, or through a
 * trusted proxy's `X-Forwarded-Proto` when TRUST_PROXY is set). HSTS over plain HTTP is ignored by
 * browsers, and sending it from `npm start` on 127.0.0.1 would pin that host for other local apps.
 */
export function securityHeaders(request: Request, response: Response, next: NextFunction): void {
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('X-Frame-Options', 'DENY');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  if (request.secure) response.setHeader('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  next();
}
