import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressPolicy } from '@hogbase/egress';
import { boundedFetch } from './bounded-fetch.util';

const LIMITS = { timeoutMs: 5_000, maxResponseBytes: 1024 };
const REFUSED = 'resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it';

/** A loopback server standing in for the server's own services (an admin port, a database's HTTP). */
async function listen(
  host: string,
  handler: Parameters<typeof createServer>[1],
): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` };
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

describe("boundedFetch: apps' fetch and webhook deliveries", () => {
  let internal: { server: Server; url: string };
  let requests = 0;

  beforeAll(async () => {
    internal = await listen('127.0.0.1', (_request, response) => {
      requests += 1;
      response.end('internal admin page');
    });
  });

  afterAll(async () => {
    await close(internal.server);
  });

  beforeEach(() => {
    requests = 0;
  });

  it('refuses a loopback listener by default, as it refuses a closed port', async () => {
    const fetch = boundedFetch({ ...LIMITS, egress: EgressPolicy.strict() });
    const port = Number(new URL(internal.url).port);
    await expect(fetch(internal.url, {})).rejects.toThrow(new Error(`127.0.0.1 ${REFUSED}`));
    await expect(fetch(`http://2130706433:${port}/`, {})).rejects.toThrow(new Error(`127.0.0.1 ${REFUSED}`));
    await expect(fetch(`http://localhost:${port}/`, {})).rejects.toThrow(new Error(`localhost ${REFUSED}`));
    const closed = await listen('127.0.0.1', () => undefined);
    await close(closed.server);
    await expect(fetch(closed.url, {})).rejects.toThrow(new Error(`127.0.0.1 ${REFUSED}`));
    expect(requests).toBe(0);
  });

  it('reaches it once an admin allowed the network', async () => {
    const fetch = boundedFetch({
      ...LIMITS,
      egress: new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }),
    });
    await expect(fetch(internal.url, { method: 'POST', body: '{}' })).resolves.toMatchObject({
      status: 200,
      body: 'internal admin page',
    });
  });

  it('refuses a redirect from an allowed server to loopback', async () => {
    const redirector = await listen('127.0.0.2', (_request, response) => {
      response.writeHead(302, { Location: `${internal.url}/admin` });
      response.end();
    });
    try {
      const fetch = boundedFetch({
        ...LIMITS,
        egress: new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.2/32'] }),
      });
      await expect(fetch(`${redirector.url}/hook`, {})).rejects.toThrow(new Error(`127.0.0.1 ${REFUSED}`));
      expect(requests).toBe(0);
    } finally {
      await close(redirector.server);
    }
  });
});
