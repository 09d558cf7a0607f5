import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api.error';

/** Deeper bodies can only attack the recursive validators, which would overflow the stack (a 500). */
export const MAX_BODY_DEPTH = 64;

/** Iterative, so any depth is safe to ask about. */
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

export function refuseDeepBodies(request: Request, _response: Response, next: NextFunction): void {
  const body: unknown = request.body;
  if (body !== null && typeof body === 'object' && exceedsDepth(body, MAX_BODY_DEPTH)) {
    next(new ApiError('invalid_input', `JSON nesting is deeper than ${MAX_BODY_DEPTH} levels.`));
    return;
  }
  next();
}

/** HSTS only over TLS: from `npm start` on 127.0.0.1 it would pin that host for other local apps. */
export function securityHeaders(request: Request, response: Response, next: NextFunction): void {
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('X-Frame-Options', 'DENY');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  if (request.secure) response.setHeader('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
  next();
}
