// The HTTP target of a capture benchmark, in its own process so the load generator does not share
// its event loop; reports its port over IPC.
//   BENCH_TARGET=capture  the capture service as apps/capture starts it (CAPTURE_WORKERS > 1: a cluster).
//   BENCH_TARGET=ceiling  node:http that gunzips, JSON-parses and answers: the most this machine can do.
import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { openCaptureEngines, startCaptureCluster, startCaptureService } from '@hogbase/capture-server';
import { ConfigError, loadCaptureConfig, runMain } from '@hogbase/config';

export interface TargetListening {
  type: 'listening';
  port: number;
}

const HOST = '127.0.0.1';

async function startCapture(): Promise<{ port: number; stop(): Promise<void> }> {
  // The production defaults; only the address differs.
  const config = { ...loadCaptureConfig(), host: HOST, port: 0 };
  const logger = pino({ level: 'warn' });
  const engines = openCaptureEngines(config, logger);
  await engines.publisher.connect();
  const service = await startCaptureService(config, engines);
  return {
    port: (service.app.server.address() as AddressInfo).port,
    async stop() {
      await service.stop();
      await engines.close();
    },
  };
}

async function startCeiling(): Promise<{ port: number; stop(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const body = Buffer.concat(chunks);
        const json = request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
        JSON.parse(json.toString('utf8'));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":1}');
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Listening once the first worker does. */
function startCaptureWorkers(workers: number): Promise<{ port: number; stop(): Promise<void> }> {
  const logger = pino({ level: 'warn' });
  return new Promise((resolve) => {
    const running = startCaptureCluster({
      workers,
      logger,
      onListening: ({ port }) =>
        resolve({
          port,
          async stop() {
            await running.stop();
          },
        }),
    });
  });
}

async function main(): Promise<void> {
  const kind = process.env.BENCH_TARGET;
  if (kind !== 'capture' && kind !== 'ceiling') {
    throw new ConfigError('BENCH_TARGET', kind ?? '', 'must be capture or ceiling');
  }
  const { workers } = loadCaptureConfig();
  if (kind === 'capture' && cluster.isWorker) {
    // A worker of the primary below: it serves, the primary reports the port to the bench.
    const worker = await startCapture();
    process.once('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
    return;
  }
  const target =
    kind === 'capture'
      ? workers > 1
        ? await startCaptureWorkers(workers)
        : await startCapture()
      : await startCeiling();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    target.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  // A Ctrl-C reaches this process too; the parent stops it anyway.
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
  const listening: TargetListening = { type: 'listening', port: target.port };
  process.send?.(listening);
}

runMain(main);
