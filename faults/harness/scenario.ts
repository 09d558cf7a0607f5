import { setTimeout as sleep } from 'node:timers/promises';
import { eventually } from '@hogbase/test-support';
import { LedgerSender, type SenderReport } from './ledger-sender';
import { SplitDeployment } from './split-deployment';

const EVENTS_PER_SECOND = Number(process.env.FAULTS_EVENTS_PER_SECOND ?? 1_000);
/** Each fault hits a pipeline in full flow. */
const STEADY_MS = 4_000;
const POLL_MS = 250;

/** Figures for reading; nothing asserts on time. */
export function report(message: string): void {
  process.stdout.write(`[faults] ${message}\n`);
}

/** Steady load, the fault (returns once recovered), steady load, then every request acknowledged. */
export async function underLoad(
  deployment: SplitDeployment,
  label: string,
  fault: () => Promise<void>,
): Promise<SenderReport & { ledger: Set<string> }> {
  const sender = new LedgerSender({
    captureUrl: deployment.capture.url,
    apiKey: deployment.project.apiKey,
    eventsPerSecond: EVENTS_PER_SECOND,
    label,
  });
  sender.start();
  const failure = await (async () => {
    await sleep(STEADY_MS);
    await fault();
    await sleep(STEADY_MS);
  })().then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
  );
  // Even a failed fault stops the sender: its requests must not outlive the test.
  const result = await sender.stop();
  if (failure) throw failure;
  report(
    `${label}: ${result.acknowledged} events acknowledged; ${result.failedAttempts} failed attempts, retried: ${JSON.stringify(result.failures)}`,
  );
  return { ...result, ledger: sender.ledger };
}

/** Answers the milliseconds until `probe` held, for the report. */
export async function timeUntil(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<number> {
  const started = Date.now();
  await eventually(what, probe, { timeoutMs, intervalMs: POLL_MS });
  return Date.now() - started;
}

export async function sample<T>(ms: number, probe: () => Promise<T>): Promise<T[]> {
  const seen: T[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    seen.push(await probe());
    await sleep(POLL_MS);
  }
  return seen;
}

/**
 * Ingestion has committed everything, the listing holds every acknowledged event exactly once and
 * nothing else, every distinct id has one person, no process exited unasked.
 */
export async function expectEveryAcknowledgedEventListedOnce(
  deployment: SplitDeployment,
  ledger: ReadonlySet<string>,
  distinctIds: number,
): Promise<void> {
  await deployment.drained();
  const listed = await deployment.listedEvents();
  const counts = new Map<string, number>();
  for (const uuid of listed.uuids) counts.set(uuid, (counts.get(uuid) ?? 0) + 1);
  const missing = [...ledger].filter((uuid) => !counts.has(uuid));
  const repeated = [...counts].filter(([, count]) => count > 1).map(([uuid]) => uuid);
  const neverAcknowledged = [...counts.keys()].filter((uuid) => !ledger.has(uuid));
  report(
    `listed ${listed.uuids.length} events for ${ledger.size} acknowledged (${listed.rawRows} rows before merges): ` +
      `${missing.length} lost, ${repeated.length} duplicated`,
  );
  expect({
    missing: missing.slice(0, 5),
    missingCount: missing.length,
    repeated: repeated.slice(0, 5),
    neverAcknowledged: neverAcknowledged.slice(0, 5),
  }).toEqual({ missing: [], missingCount: 0, repeated: [], neverAcknowledged: [] });
  expect(listed.uuids).toHaveLength(ledger.size);
  expect(await deployment.persons()).toEqual({ persons: distinctIds, distinctIds });
  expect(deployment.unexpectedExits()).toEqual([]);
}

/** Started before the file's tests; the ledger grows over its scenarios and every verdict checks all of it. */
export function faultSuite(): {
  readonly deployment: SplitDeployment;
  verify(result: { ledger: ReadonlySet<string>; distinctIds: string[] }): Promise<void>;
} {
  let deployment: SplitDeployment | undefined;
  const ledger = new Set<string>();
  let distinctIds = 0;
  beforeAll(async () => {
    deployment = await SplitDeployment.start(report);
  });
  afterAll(async () => {
    await deployment?.destroy();
  });
  const current = () => {
    if (!deployment) throw new Error('the deployment did not start');
    return deployment;
  };
  return {
    get deployment() {
      return current();
    },
    async verify(result) {
      result.ledger.forEach((uuid) => ledger.add(uuid));
      distinctIds += result.distinctIds.length;
      await expectEveryAcknowledgedEventListedOnce(current(), ledger, distinctIds);
    },
  };
}
