import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { CaptureAppOptions } from '../capture.app';

/** The options of buildCaptureApp that the integration specs do not vary. */
export const TEST_CAPTURE_OPTIONS = {
  batchBodyLimit: 20_000_000,
  eventBodyLimit: 1_000_000,
  maxDecodedBytes: 20_000_000,
  trustProxy: false,
  ready: () => Promise.resolve(true),
} satisfies Partial<CaptureAppOptions>;

/** Listens on a free loopback port; resolves with the base URL. */
export async function listenOnLoopback(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}
