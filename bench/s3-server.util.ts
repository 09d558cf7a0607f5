import path from 'node:path';

/** tools/s3-server.mjs is plain ESM, no types. */
interface S3ServerModule {
  startS3Server: (options: {
    port: number;
    log: (message: string) => void;
  }) => Promise<{ endpoint: string; stop(): Promise<void> }>;
}

export interface S3Server {
  /** Path-style, any credentials and region. */
  endpoint: string;
  /** Only if this process started it. */
  stop(): Promise<void>;
}

/**
 * `endpoint` when given, else S3Mock as `npm test` starts it; the tool kills the JVM from an 'exit'
 * hook, so a crashed benchmark leaves no server behind.
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
  // Absolute: works for both a native import() and the require() swc compiles it to.
  const modulePath = path.resolve(__dirname, '..', 'tools', 's3-server.mjs');
  const { startS3Server } = (await import(modulePath)) as S3ServerModule;
  const server = await startS3Server({ port: 0, log });
  return { endpoint: server.endpoint, stop: () => server.stop() };
}
