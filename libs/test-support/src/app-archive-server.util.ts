import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

/** Archive entry name → content; `{ symlink }` makes a link entry. */
export type ArchiveEntries = Record<string, string | Uint8Array | { symlink: string }>;

export async function tarGz(entries: ArchiveEntries): Promise<Buffer> {
  const packer = pack();
  const chunks: Buffer[] = [];
  packer.on('data', (chunk: unknown) => {
    chunks.push(chunk as Buffer);
  });
  const finished = new Promise<void>((resolve, reject) => {
    packer.on('end', resolve);
    packer.on('error', reject);
  });
  for (const [name, content] of Object.entries(entries)) {
    if (typeof content === 'object' && 'symlink' in content) {
      packer.entry({ name, type: 'symlink', linkname: content.symlink });
    } else {
      packer.entry({ name }, typeof content === 'string' ? content : Buffer.from(content));
    }
  }
  packer.finalize();
  await finished;
  return gzipSync(Buffer.concat(chunks));
}

/** An npm-style tarball (everything under `package/`) of these files: a pipeline app to install. */
export function npmTarball(files: Record<string, string>): Promise<Buffer> {
  return tarGz(
    Object.fromEntries(Object.entries(files).map(([name, content]) => [`package/${name}`, content])),
  );
}

/** A loopback HTTP server whose routes a test sets and changes: `routes[path] = () => [status, body]`. */
export interface AppServer {
  url: string;
  routes: Map<string, () => [number, string | Buffer, string?]>;
  requests: string[];
  close(): Promise<void>;
}

export async function startAppServer(): Promise<AppServer> {
  const routes: AppServer['routes'] = new Map();
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    requests.push(path);
    const route = routes.get(path);
    if (!route) {
      response.writeHead(404).end('not found');
      return;
    }
    const [status, body, type] = route();
    response.writeHead(status, { 'Content-Type': type ?? 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    routes,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve()))),
  };
}
