import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Browsers call this route cross-origin: posthog-js on the customer's own site. */
    browser?: boolean;
  }
}

/**
 * CORS for the browser routes only, as PostHog's capture answers them: the request's origin and
 * headers mirrored, GET/POST/OPTIONS, credentials allowed.
 *
 * NOTE: credentials stay allowed on purpose. posthog-js's XHR transport sets
 * `withCredentials = true` (to send its opt-out cookie), and a browser discards a credentialed
 * response without `Access-Control-Allow-Credentials: true`: the SDK would see status 0 for events
 * that were stored, and send them again. Capture reads no cookie and answers nothing secret (the
 * project token is in the body), so credentials grant a page nothing here.
 * Server-side routes (the local-evaluation definitions, taken with a personal API key; health,
 * readiness, metrics) answer no CORS at all, so no web page can read them or preflight them.
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
