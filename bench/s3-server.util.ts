import path from 'node:path';

/** What the benchmarks use of tools/s3-server.mjs (plain ESM, no types). */
interface S3ServerModule {
  startS3Server: (options: {
    port: number;
    log: (message: string) => void;
  }) => Promise<{ endpoint: string; stop(): Promise<void> }>;
}

export interface S3Server {
  /** `http://127.0.0.1:<port>`: path-style, any credentials and region. */
  endpoint: string;
  /** Stops the server if this process started it (its objects go with it). */
  stop(): Promise<void>;
}

/**
 * `endpoint` when given (S3_ENDPOINT); else Adobe S3Mock from the cached jar on a free loopback
 * port, as `npm test` starts it.
 *
 * NOTE: tools/s3-server.mjs kills the JVM from a process 'exit' hook if this process dies without
 * stop(), so a crashed benchmark does not leave a server behind.
 */
export async function startS3(
  endpoint: string | undefined,
  log: (message: string) => void,
): Promise<S3Server> {
  if (endpoint) {
    log(`S3: using S3_ENDPOINT=${endpoint}`);
    return { endpoint, stop: () => Promise.resolve() };
  }
  log('starting an S3-compatible server (Adobe S3Mock on 127.0.0.1, jar cached in ~/.cache/hogbase)');
  // An absolute path works for both a native import() and the require() swc compiles it to.
  const modulePath = path.resolve(__dirname, '..', 'tools', 's3-server.mjs');
  const { startS3Server } = (await import(modulePath)) as S3ServerModule;
  const server = await startS3Server({ port: 0, log });
  return { endpoint: server.endpoint, stop: () => server.stop() };
}
