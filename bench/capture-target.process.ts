// A child process serving the HTTP target of a capture benchmark on 127.0.0.1, on a free port it
// reports to the parent over IPC. Its own process, so the load generator does not share its event
// loop. Started by target-process.util.ts:
//
//   BENCH_TARGET=capture  the capture service as apps/capture starts it (openCaptureEngines,
//                         startCaptureService): a KafkaEventPublisher (acks -1), tokens and flags
//                         over a pg Pool. Needs DATABASE_URL and KAFKA_BROKERS. With
//                         CAPTURE_WORKERS > 1, as apps/capture runs then: this process supervises
//                         that many workers sharing the port (startCaptureCluster).
//   BENCH_TARGET=ceiling  a plain node:http server that reads each body, gunzips it when the
//                         SDK gzipped it, JSON-parses it and answers {status: 1}: what any
//                         capture must do at least, so the most this machine can do.
import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { openCaptureEngines, startCaptureCluster, startCaptureService } from '@hogbase/capture-server';
import { ConfigError, loadCaptureConfig, runMain } from '@hogbase/config';

/** The first message a target sends its parent. */
export interface TargetListening {
  type: 'listening';
  port: number;
}

const HOST = '127.0.0.1';

async function startCapture(): Promise<{ port: number; stop(): Promise<void> }> {
  // The app's own config reader and composition root, so limits and timeouts are the production
  // defaults; only the address differs (loopback, a free port).
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

/** The primary of CAPTURE_WORKERS workers, listening once the first of them does. */
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
  // NOTE: a Ctrl-C reaches this process too (same process group); the parent stops it anyway.
  process.once('SIGINT', stop);
  // The parent gone (crashed) means nobody will stop us.
  process.once('disconnect', stop);
  const listening: TargetListening = { type: 'listening', port: target.port };
  process.send?.(listening);
}

runMain(main);
