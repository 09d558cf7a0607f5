import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import {
  AggregatorRegistry,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from 'prom-client';

/**
 * CAPTURE_WORKERS > 1: the primary supervises workers, each a whole capture on the shared port.
 * /metrics sums every worker's (through the primary); the probes are the answering worker's own.
 */
export interface CaptureClusterOptions {
  workers: number;
  logger: Logger;
  /** Once the first worker listens (port 0 becomes a random one). */
  onListening?: (address: { port: number }) => void;
}

export interface CaptureCluster {
  /** SIGTERM to every worker, then resolves with whether each exited 0 (bounded by `timeoutMs`). */
  stop(timeoutMs?: number): Promise<boolean>;
}

/** A worker, to the primary: my service runs, ask me for metrics from now on. */
const JOINED = 'hogbase:capture-joined';
const CLUSTER_METRICS = 'hogbase:capture-cluster-metrics';
const OWN_METRICS = 'hogbase:capture-own-metrics';

/** A worker that dies sooner than this after its start is restarted only after a pause. */
const CRASH_LOOP_MS = 5_000;
const RESTART_PAUSE_MS = 2_000;
const STOP_TIMEOUT_MS = 30_000;
const COLLECT_TIMEOUT_MS = 5_000;

type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

interface ClusterMessage {
  type: string;
  id?: number;
  text?: string;
  metrics?: WorkerMetrics;
  error?: string;
}

function asMessage(message: unknown): ClusterMessage | undefined {
  return typeof (message as { type?: unknown } | null)?.type === 'string'
    ? (message as ClusterMessage)
    : undefined;
}

function exchange(
  send: (message: ClusterMessage) => void,
  subscribe: (listener: (message: unknown) => void) => () => void,
  request: ClusterMessage & { id: number },
  timeoutMs: number,
): Promise<ClusterMessage> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(new Error(`no answer to ${request.type} within ${timeoutMs} ms`));
    }, timeoutMs);
    const unsubscribe = subscribe((raw) => {
      const message = asMessage(raw);
      if (message?.type !== request.type || message.id !== request.id) return;
      clearTimeout(timer);
      unsubscribe();
      resolve(message);
    });
    send(request);
  });
}

let nextId = 0;

/**
 * In the primary: forks the workers (this same program) and replaces one that dies. SIGTERM is
 * passed to every worker, which drains as capture alone does; stop resolves once all have exited.
 */
export function startCaptureCluster(options: CaptureClusterOptions): CaptureCluster {
  const { logger } = options;
  const startedAt = new Map<Worker, number>();
  /** Workers whose service runs: the ones asked for metrics. */
  const joined = new Set<Worker>();
  /** Only these can have requests in flight. */
  const listening = new Set<Worker>();
  let stopping = false;
  let announced = false;

  const ownMetrics = async (worker: Worker): Promise<WorkerMetrics> => {
    const answer = await exchange(
      (message) => worker.send(message),
      (listener) => {
        worker.on('message', listener);
        return () => worker.off('message', listener);
      },
      { type: OWN_METRICS, id: ++nextId },
      COLLECT_TIMEOUT_MS,
    );
    if (!answer.metrics) throw new Error(`worker ${worker.process.pid}: ${answer.error ?? 'no metrics'}`);
    return answer.metrics;
  };

  const clusterMetrics = async (): Promise<string> => {
    const workers = [...joined].filter((worker) => worker.isConnected());
    const all = await Promise.all(workers.map(ownMetrics));
    return AggregatorRegistry.aggregate(all).metrics();
  };

  const fork = () => {
    const worker = cluster.fork();
    startedAt.set(worker, Date.now());
    worker.on('message', (raw: unknown) => {
      const message = asMessage(raw);
      if (message?.type === JOINED) joined.add(worker);
      if (message?.type !== CLUSTER_METRICS) return;
      clusterMetrics().then(
        (text) => worker.send({ type: CLUSTER_METRICS, id: message.id, text }),
        (error: unknown) => worker.send({ type: CLUSTER_METRICS, id: message.id, error: String(error) }),
      );
    });
  };

  cluster.on('listening', (worker, address) => {
    listening.add(worker);
    if (announced) return;
    announced = true;
    options.onListening?.({ port: address.port });
  });
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? 0);
    startedAt.delete(worker);
    joined.delete(worker);
    if (stopping) return;
    listening.delete(worker);
    logger.error({ pid: worker.process.pid, code, signal }, 'capture worker exited: starting another');
    setTimeout(fork, lived < CRASH_LOOP_MS ? RESTART_PAUSE_MS : 0);
  });
  for (let index = 0; index < options.workers; index++) fork();

  return {
    async stop(timeoutMs = STOP_TIMEOUT_MS) {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => !!worker);
      // A worker still starting has taken no request: the signal may end it before its handler is in place.
      const stoppedCleanly = (worker: Worker, code: number | null) => code === 0 || !listening.has(worker);
      const exits = workers.map(
        (worker) =>
          new Promise<boolean>((resolve) => {
            if (worker.isDead()) return resolve(stoppedCleanly(worker, worker.process.exitCode));
            worker.once('exit', (code: number | null) => resolve(stoppedCleanly(worker, code)));
          }),
      );
      for (const worker of workers) worker.process.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean[]>((resolve) => {
        timer = setTimeout(() => {
          for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
          resolve([false]);
        }, timeoutMs);
      });
      const results = await Promise.race([Promise.all(exits), timedOut]);
      clearTimeout(timer);
      return results.every(Boolean);
    },
  };
}

const processListeners = (listener: (message: unknown) => void) => {
  process.on('message', listener);
  return () => {
    process.off('message', listener);
  };
};

const toPrimary = (message: ClusterMessage) => process.send?.(message);

/** In a worker, once its service runs. */
export function reportMetricsToPrimary(registry: Registry): void {
  process.on('message', (raw: unknown) => {
    const message = asMessage(raw);
    if (message?.type !== OWN_METRICS) return;
    registry.getMetricsAsJSON().then(
      (metrics) => toPrimary({ type: OWN_METRICS, id: message.id, metrics }),
      (error: unknown) => toPrimary({ type: OWN_METRICS, id: message.id, error: String(error) }),
    );
  });
  toPrimary({ type: JOINED });
}

/** In a worker: what /metrics answers. */
export async function clusterMetricsText(): Promise<string> {
  const answer = await exchange(
    toPrimary,
    processListeners,
    { type: CLUSTER_METRICS, id: ++nextId },
    COLLECT_TIMEOUT_MS * 2,
  );
  if (answer.text === undefined) {
    throw new Error(`the capture primary could not collect metrics: ${answer.error ?? 'no answer'}`);
  }
  return answer.text;
}
