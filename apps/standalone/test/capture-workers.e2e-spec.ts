import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { READY_TIMEOUT_MS, stopApp, waitForApp, type AppProcess } from './app-process';
import { SplitModeForTest } from './split-mode-test.util';

/** The processes whose parent is `pid` (Linux: /proc/<pid>/stat's 4th field). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** The sum of a counter over its label sets in a Prometheus text exposition. */
function counterSum(metrics: string, name: string): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * Posts /batch/ requests of `size` events from `connections` loops until stopped, and keeps the
 * uuids of every event capture answered 200 for; a request refused or cut off is not retried.
 */
function sendUntilStopped(captureUrl: string, token: string, run: string, connections: number) {
  const acknowledged = new Set<string>();
  let running = true;
  const loops = Array.from({ length: connections }, async (_, loop) => {
    for (let request = 0; running; request++) {
      const batch = Array.from({ length: 20 }, () => ({
        event: 'worker test',
        distinct_id: `${run}-${loop}`,
        uuid: randomUUID(),
        properties: { request },
      }));
      const answered = await fetch(`${captureUrl}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: token, batch }),
      }).then(
        (response) => response.status,
        () => 0,
      );
      if (answered === 200) for (const event of batch) acknowledged.add(event.uuid);
      else await sleep(50);
    }
  });
  return {
    acknowledged,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * CAPTURE_WORKERS: capture alone on several processes sharing its port. The primary replaces a
 * worker that dies, /metrics sums every worker's, and SIGTERM to the primary drains every worker:
 * each event a worker answered 200 for is ingested.
 */
describe('capture with CAPTURE_WORKERS=2', () => {
  const run = randomBytes(4).toString('hex');
  let split: SplitModeForTest;
  /**
   * What a failed test may leave running: its load loops (which would keep Jest from exiting) and
   * the workers it saw (killing their primary does not end them).
   */
  const senders: { stop(): Promise<void> }[] = [];
  /** Each worker seen, with its command line: a pid reused since by another process is left alone. */
  const seenWorkers = new Map<number, string>();
  const sending = (captureUrl: string, token: string, name: string) => {
    const sender = sendUntilStopped(captureUrl, token, name, 8);
    senders.push(sender);
    return sender;
  };
  const workersOf = (primary: AppProcess): number[] => {
    const workers = childrenOf(primary.child.pid as number);
    for (const pid of workers) seenWorkers.set(pid, commandLineOf(pid));
    return workers;
  };

  beforeAll(async () => {
    split = await SplitModeForTest.prepare('hogbase-capture-workers-', `capture-workers-${run}`, {
      CAPTURE_WORKERS: '2',
    });
  });

  afterAll(async () => {
    await Promise.all(senders.map((sender) => sender.stop()));
    await split?.cleanUp();
    for (const [pid, commandLine] of seenWorkers) {
      if (!commandLine || commandLineOf(pid) !== commandLine) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone between the look and the kill.
      }
    }
  });

  it(
    'serves from two workers, replaces a killed one, sums their metrics and drains both on SIGTERM',
    async () => {
      const credentials = await split.bootstrapOwner(`owner-${run}@workers.test`);
      const { capture, ingestion, captureUrl } = await split.startCaptureAndIngestion();
      let workers: number[] = [];
      await waitForApp(capture, '2 capture workers', () => {
        workers = workersOf(capture);
        return Promise.resolve(workers.length === 2);
      });
      const [first] = workers;

      const sender = sending(captureUrl, credentials.project_api_key, run);
      await sleep(1_500);
      process.kill(first, 'SIGKILL');
      await waitForApp(capture, 'a replacement worker', () =>
        Promise.resolve(workersOf(capture).filter((pid) => pid !== first).length === 2),
      );
      await sleep(1_500);
      await sender.stop();
      const beforeStop = sender.acknowledged.size;
      expect(beforeStop).toBeGreaterThan(0);

      // Every worker's count, summed: at least what the live workers answered 200 for (the
      // killed worker's count died with it).
      const metrics = await (await fetch(`${captureUrl}/metrics`)).text();
      expect(metrics).toContain('capture_events_total');
      const counted = counterSum(metrics, 'capture_events_total');
      expect(counted).toBeGreaterThan(0);
      expect(counted).toBeLessThanOrEqual(beforeStop);

      // SIGTERM while requests arrive: the primary exits 0 once both workers have drained.
      const drainingLoad = sending(captureUrl, credentials.project_api_key, `${run}-drain`);
      await sleep(1_000);
      const draining = workersOf(capture);
      expect(await stopApp(capture)).toEqual({ code: 0, signal: null });
      await drainingLoad.stop();
      expect(draining.filter(existsProcess)).toEqual([]);

      await split.waitForIngestionCaughtUp(ingestion);
      expect(await stopApp(ingestion)).toEqual({ code: 0, signal: null });
      const management = await split.start('management');
      const listed = new Set<string>();
      let next: string | null =
        `${management.url}/api/projects/${credentials.project_id}/events/?limit=50000&event=worker%20test&after=2000-01-01T00:00:00Z`;
      while (next) {
        const response: Response = await fetch(next, {
          headers: { Authorization: `Bearer ${credentials.personal_api_key}` },
        });
        expect(response.status).toBe(200);
        const page = (await response.json()) as { results: { id: string }[]; next: string | null };
        for (const event of page.results) listed.add(event.id);
        next = page.next;
      }
      const acknowledged = [...sender.acknowledged, ...drainingLoad.acknowledged];
      expect(acknowledged.filter((uuid) => !listed.has(uuid))).toEqual([]);
      expect(await stopApp(management.app)).toEqual({ code: 0, signal: null });
    },
    6 * READY_TIMEOUT_MS,
  );

  it(
    'exits 0 on SIGTERM while a replacement worker is still starting (it has taken no request)',
    async () => {
      const { app: capture } = await split.start('capture');
      let workers: number[] = [];
      await waitForApp(capture, '2 capture workers', () => {
        workers = workersOf(capture);
        return Promise.resolve(workers.length === 2);
      });
      process.kill(workers[0], 'SIGKILL');
      let replacement: number | undefined;
      await waitForApp(capture, 'a replacement worker', () => {
        replacement = workersOf(capture).find((pid) => !workers.includes(pid));
        return Promise.resolve(replacement !== undefined);
      });
      // Its `node` is loading the program: it listens a second or more from now.
      expect(await stopApp(capture)).toEqual({ code: 0, signal: null });
      expect(existsProcess(replacement as number)).toBe(false);
    },
    3 * READY_TIMEOUT_MS,
  );
});

/** A process's command line, or '' once it is gone. */
function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

function existsProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
