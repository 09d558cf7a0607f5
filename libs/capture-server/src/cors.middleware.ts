import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** posthog-js calls this route cross-origin. */
    browser?: boolean;
  }
}

/**
 * CORS for the browser routes only, as PostHog's capture: origin and headers mirrored. Server-side
 * routes (local-evaluation definitions, probes) answer no CORS, so no page can read them.
 *
 * NOTE: credentials stay allowed: posthog-js's XHR sets `withCredentials`, and without the header the
 * browser hides a stored event's answer and the SDK sends it again. Capture reads no cookie.
 */
export function registerBrowserCors(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.browser !== true) return;
    const origin = request.headers.origin;
    void reply.header('Vary', 'Origin, Access-Control-Request-Headers');
    void reply.header('Access-Control-Allow-Origin', origin ?? '*');
    if (origin) void reply.header('Access-Control-Allow-Credentials', 'true');
    void reply.header('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    const requested = request.headers['access-control-request-headers'];
    void reply.header('Access-Control-Allow-Headers', requested ?? 'content-type');
  });
}
