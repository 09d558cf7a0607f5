import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@hogbase/test-support';

interface BrokerHandle {
  pid: number;
  exited: Promise<{ code: number | null; signal: string | null }>;
  stop(): Promise<void>;
}

/** tools/kafka-broker.mjs is plain ESM, no types. */
interface KafkaBrokerModule {
  startKafkaBroker: (options: {
    port: number;
    controllerPort: number;
    dataDir: string;
    logDir: string;
    log: (message: string) => void;
  }) => Promise<BrokerHandle & { port: number; controllerPort: number }>;
}

/** A KRaft broker of the suite's own, stopped, killed and restarted on the same ports and data. */
export interface KafkaServer {
  brokers: string;
  stop(): Promise<void>;
  /** kill -9: unflushed data survives only in the page cache. */
  kill(): Promise<void>;
  /** Resolves once it answers. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

export async function startKafkaServer(log: (message: string) => void): Promise<KafkaServer> {
  const modulePath = path.join(REPO_ROOT, 'tools', 'kafka-broker.mjs');
  const { startKafkaBroker } = (await import(modulePath)) as KafkaBrokerModule;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-faults-kafka-'));
  const logDir = path.join(dataDir, 'kraft');
  let ports = { port: 0, controllerPort: 0 };
  let broker: BrokerHandle | undefined;

  const start = async () => {
    const started = await startKafkaBroker({ ...ports, dataDir, logDir, log });
    ports = { port: started.port, controllerPort: started.controllerPort };
    broker = started;
  };
  await start();

  return {
    brokers: `127.0.0.1:${ports.port}`,
    stop: async () => {
      await broker?.stop();
      broker = undefined;
    },
    kill: async () => {
      if (!broker) return;
      process.kill(broker.pid, 'SIGKILL');
      await broker.exited;
      await broker.stop(); // Only unregisters its exit hook now.
      broker = undefined;
    },
    start,
    destroy: async () => {
      await broker?.stop();
      broker = undefined;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
