import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** posthog-js calls this route cross-origin. */
    browser?: boolean;
  }
}

/**
 * CORS for browser routes only (origin and headers mirrored): no page can read the server-side ones.
 * NOTE: credentials allowed: posthog-js sets `withCredentials`, and without the header the browser
 * hides the answer and the SDK resends the event. Capture reads no cookie.
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
