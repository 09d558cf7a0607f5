import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { strToU8, zipSync } from 'fflate';

/** A zip of these entries (tarballs come from test-support's `tarGz`). */
export function zip(entries: Record<string, string | Uint8Array>, comment?: string): Buffer {
  const zipped = Buffer.from(
    zipSync(
      Object.fromEntries(
        Object.entries(entries).map(([name, content]) => [
          name,
          typeof content === 'string' ? strToU8(content) : content,
        ]),
      ),
    ),
  );
  if (comment === undefined) return zipped;
  // fflate writes no archive comment; `git archive` does (the commit id), so the test adds one.
  const commentBytes = Buffer.from(comment, 'utf8');
  zipped.writeUInt16LE(commentBytes.length, zipped.length - 2);
  return Buffer.concat([zipped, commentBytes]);
}

export interface Route {
  status?: number;
  body: string | Buffer;
  headers?: Record<string, string>;
}

/** A loopback HTTP server answering from a route table the test may change between requests. */
export class FakeHttpServer {
  readonly routes = new Map<string, Route | ((request: IncomingMessage) => Route)>();
  readonly requests: IncomingMessage[] = [];
  readonly hangingPaths = new Set<string>();
  private readonly server: Server;

  constructor() {
    this.server = createServer((request: IncomingMessage, response: ServerResponse) => {
      this.requests.push(request);
      // A hanging route answers nothing until the client gives up (or the server stops).
      if (this.hangingPaths.has(request.url ?? '')) return;
      const handler = this.routes.get(request.url ?? '');
      const route = typeof handler === 'function' ? handler(request) : handler;
      if (!route) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      response.writeHead(route.status ?? 200, route.headers ?? {}).end(route.body);
    });
  }

  async start(host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, host, resolve));
    return `http://${host}:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export const json = (value: unknown): Route => ({
  body: JSON.stringify(value),
  headers: { 'content-type': 'application/json' },
});
