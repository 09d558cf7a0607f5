import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { createEgressAgents } from './egress-agents.util';
import { createEgressFetch } from './egress-fetch.util';
import { EgressRefusedError } from './egress.errors';
import { EgressPolicy } from './egress-policy.service';
import { registerOwnPort } from './own-ports.store';

interface Listener {
  url: string;
  port: number;
  requests: { method: string; url: string; authorization: string | undefined; body: string }[];
  close(): Promise<void>;
}

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

/** An HTTP server on a loopback address, standing in for a service the server must not reach. */
async function listen(host: string, handler: Handler): Promise<Listener> {
  const requests: Listener['requests'] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        body,
      });
      // Every exchange on its own connection, so that each request is a new connection to check.
      response.setHeader('Connection', 'close');
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const secret: Handler = (_request, response) => response.end('the internal secret');

const PRIVATE = 'resolves to a private address; set EGRESS_ALLOWED_PRIVATE_NETWORKS to allow it';

describe('createEgressFetch', () => {
  let internal: Listener;
  let closedPort: number;

  beforeAll(async () => {
    internal = await listen('127.0.0.1', secret);
    const closed = await listen('127.0.0.1', secret);
    closedPort = closed.port;
    await closed.close();
  });

  afterAll(async () => {
    await internal.close();
  });

  it('refuses a loopback listener, with the same error as a closed port (no port oracle)', async () => {
    const fetch = createEgressFetch(EgressPolicy.strict());
    const open = await fetch(`${internal.url}/`).catch((error: unknown) => error);
    const closed = await fetch(`http://127.0.0.1:${closedPort}/`).catch((error: unknown) => error);
    expect(open).toBeInstanceOf(EgressRefusedError);
    expect((open as Error).message).toBe(`127.0.0.1 ${PRIVATE}`);
    expect((closed as Error).message).toBe((open as Error).message);
    expect(internal.requests).toEqual([]);
  });

  it.each(['2130706433', '0x7f.1', '127.1', 'localhost', '[::ffff:127.0.0.1]', '0.0.0.0'])(
    'refuses loopback spelled %s',
    async (host) => {
      const fetch = createEgressFetch(EgressPolicy.strict());
      await expect(fetch(`http://${host}:${internal.port}/`)).rejects.toThrow(EgressRefusedError);
      expect(internal.requests).toEqual([]);
    },
  );

  it('refuses the cloud metadata address', async () => {
    const fetch = createEgressFetch(EgressPolicy.strict());
    await expect(fetch('http://169.254.169.254/latest/meta-data/')).rejects.toThrow(
      `169.254.169.254 ${PRIVATE}`,
    );
    expect(internal.requests).toEqual([]);
  });

  it('reaches a loopback listener once its network is allowed', async () => {
    const fetch = createEgressFetch(new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }));
    const response = await fetch(`${internal.url}/allowed`);
    expect(await response.text()).toBe('the internal secret');
    internal.requests.length = 0;
  });

  it("refuses the server's own port even where loopback is allowed", async () => {
    const fetch = createEgressFetch(new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }));
    const release = registerOwnPort(internal.port);
    try {
      await expect(fetch(`${internal.url}/`)).rejects.toThrow(
        `127.0.0.1 port ${internal.port} is this server's own; requests to the server itself are refused`,
      );
    } finally {
      release();
    }
    expect(internal.requests).toEqual([]);
  });

  it('refuses other protocols', async () => {
    const fetch = createEgressFetch(EgressPolicy.strict());
    await expect(fetch('file:///etc/passwd')).rejects.toThrow('file: URLs are refused: only http and https');
  });
});

describe('createEgressFetch redirects', () => {
  // 127.0.0.2 stands for an allowed ("public") server, 127.0.0.1 for the internal one behind it.
  const policy = new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.2/32'] });
  let internal: Listener;
  let allowed: Listener;

  beforeAll(async () => {
    internal = await listen('127.0.0.1', secret);
    allowed = await listen('127.0.0.2', (request, response, body) => {
      const [path, query] = (request.url ?? '').split('?');
      const target = new URLSearchParams(query).get('to') ?? '';
      if (path === '/redirect') {
        response.writeHead(Number(new URLSearchParams(query).get('status') ?? 302), { Location: target });
        response.end();
      } else if (path === '/loop') {
        response.writeHead(302, { Location: '/loop' });
        response.end();
      } else {
        response.end(`${request.method} ${body}`);
      }
    });
  });

  afterAll(async () => {
    await internal.close();
    await allowed.close();
  });

  beforeEach(() => {
    internal.requests.length = 0;
    allowed.requests.length = 0;
  });

  it('refuses a redirect from an allowed target to loopback, before any request reaches it', async () => {
    const fetch = createEgressFetch(policy);
    const to = encodeURIComponent(`${internal.url}/admin`);
    await expect(fetch(`${allowed.url}/redirect?to=${to}`)).rejects.toThrow(`127.0.0.1 ${PRIVATE}`);
    expect(allowed.requests).toHaveLength(1);
    expect(internal.requests).toEqual([]);
  });

  it.each([
    ['follows a redirect within what is allowed, a 303 turning a POST into a GET', 303, 'GET '],
    ['sends the body again on a 307', 307, 'POST data'],
  ])('%s', async (_name, status, echoed) => {
    const fetch = createEgressFetch(policy);
    const to = encodeURIComponent(`${allowed.url}/echo`);
    const response = await fetch(`${allowed.url}/redirect?status=${status}&to=${to}`, {
      method: 'POST',
      body: 'data',
    });
    expect(await response.text()).toBe(echoed);
  });

  it('does not send credentials to another origin', async () => {
    const fetch = createEgressFetch(new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }));
    const to = encodeURIComponent(`${internal.url}/other-origin`);
    await fetch(`${allowed.url}/redirect?to=${to}`, { headers: { Authorization: 'Bearer token' } });
    expect(allowed.requests[0]?.authorization).toBe('Bearer token');
    expect(internal.requests[0]?.authorization).toBeUndefined();
  });

  it('stops after a bounded number of redirects', async () => {
    const fetch = createEgressFetch(policy, { maxRedirects: 3 });
    await expect(fetch(`${allowed.url}/loop`)).rejects.toThrow(
      `more than 3 redirects from 127.0.0.2:${allowed.port}`,
    );
    expect(allowed.requests).toHaveLength(4);
  });

  it("returns the redirect itself with redirect: 'manual'", async () => {
    const fetch = createEgressFetch(policy);
    const to = encodeURIComponent(`${internal.url}/admin`);
    const response = await fetch(`${allowed.url}/redirect?to=${to}`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(internal.requests).toEqual([]);
  });

  it('checks the address of every new connection, so a name rebound to loopback is refused', async () => {
    const answers = ['127.0.0.2', '127.0.0.1'];
    const rebinding = new EgressPolicy({
      allowedPrivateNetworks: ['127.0.0.2/32'],
      resolve: () => Promise.resolve([{ address: answers.shift() ?? '127.0.0.1', family: 4 as const }]),
    });
    const fetch = createEgressFetch(rebinding);
    const first = await fetch(`http://rebind.test:${allowed.port}/echo`);
    expect(await first.text()).toBe('GET ');
    await expect(fetch(`http://rebind.test:${allowed.port}/echo`)).rejects.toThrow(`rebind.test ${PRIVATE}`);
    expect(internal.requests).toEqual([]);
  });
});

describe('createEgressAgents', () => {
  let internal: Listener;

  beforeAll(async () => {
    internal = await listen('127.0.0.1', secret);
  });

  afterAll(async () => {
    await internal.close();
  });

  function get(url: string, agent: http.Agent): Promise<string> {
    return new Promise((resolve, reject) => {
      http
        .get(url, { agent }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        })
        .on('error', reject);
    });
  }

  it('refuses loopback through the http agent', async () => {
    const { httpAgent } = createEgressAgents(EgressPolicy.strict());
    await expect(get(`http://localhost:${internal.port}/`, httpAgent)).rejects.toThrow(
      `localhost ${PRIVATE}`,
    );
    await expect(get(`${internal.url}/`, httpAgent)).rejects.toThrow(`127.0.0.1 ${PRIVATE}`);
    expect(internal.requests).toEqual([]);
    httpAgent.destroy();
  });

  it('connects where the policy allows', async () => {
    const { httpAgent } = createEgressAgents(new EgressPolicy({ allowedPrivateNetworks: ['127.0.0.0/8'] }));
    await expect(get(`${internal.url}/`, httpAgent)).resolves.toBe('the internal secret');
    httpAgent.destroy();
  });
});

describe('TLS through a checked connection', () => {
  // A certificate for egress.test only: it verifies when the client names egress.test while
  // connecting to the checked address, and fails against the bare address.
  const fixtures = path.join(__dirname, '..', 'test', 'fixtures');
  const cert = readFileSync(path.join(fixtures, 'egress-test.cert.pem'));
  const key = readFileSync(path.join(fixtures, 'egress-test.key.pem'));
  const policy = new EgressPolicy({
    allowedPrivateNetworks: ['127.0.0.0/8'],
    resolve: () => Promise.resolve([{ address: '127.0.0.1', family: 4 as const }]),
  });
  let server: https.Server;
  let port: number;
  const serverNames: (string | false | null)[] = [];

  beforeAll(async () => {
    server = https.createServer({ cert, key }, (_request, response) => response.end('over TLS'));
    server.on('secureConnection', (socket: TLSSocket) => serverNames.push(socket.servername));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('keeps the host name for SNI and certificate checks in fetch', async () => {
    const fetch = createEgressFetch(policy, { ca: cert });
    const response = await fetch(`https://egress.test:${port}/`);
    expect(await response.text()).toBe('over TLS');
    expect(serverNames).toContain('egress.test');
    await expect(fetch(`https://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('keeps the host name for SNI and certificate checks in the https agent', async () => {
    const { httpsAgent } = createEgressAgents(policy, { ca: cert });
    const body = await new Promise<string>((resolve, reject) => {
      https
        .get(`https://egress.test:${port}/`, { agent: httpsAgent }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        })
        .on('error', reject);
    });
    expect(body).toBe('over TLS');
    httpsAgent.destroy();
  });
});
