import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { findRunningEmbeddedPostgres } from '@hogbase/postgres';
import { report, sample, timeUntil } from './harness/scenario';
import {
  expectEveryAcknowledgedEventListedOnce,
  StandaloneDeployment,
} from './harness/standalone-deployment';

const execFileAsync = promisify(execFile);
const STEADY_MS = 4_000;
/** How long DATA_DIR stays full under load (and the WAL writer's writes). */
const FULL_MS = 60_000;
/** What the WAL writer writes at most: more WAL segments than Postgres keeps recycled. */
const WAL_WRITER_MAX_MB = 512;
/** Mounting the small filesystem DATA_DIR fills takes root. */
const describeAsRoot = process.getuid?.() === 0 ? describe : describe.skip;

/** Fills the filesystem of `mountPoint` to its last block with one file, whose path it returns. */
function fill(mountPoint: string): string {
  const filler = path.join(mountPoint, 'filler');
  // dd stops (and exits 1) at ENOSPC: that is the point.
  spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' });
  return filler;
}

interface WalWriterResult {
  /** The PANIC that ended the embedded Postgres, if it came: `<code> <message>`. */
  panic?: string;
  /** When it came, in ms after the writer started. */
  panicAfterMs?: number;
  writtenMb: number;
  /** The error that stopped the writer otherwise. */
  stoppedBy?: string;
}

/**
 * Writes WAL through the embedded Postgres's socket (1 MB logical messages, no table grows) until
 * it fails, as minutes of person updates on a full disk did: once the WAL needs a segment the full
 * filesystem cannot hold, Postgres PANICs (53100), and the embedded one must come back by itself
 * once space is freed.
 */
async function writeWalUntilItFails(dataDir: string, signal: AbortSignal): Promise<WalWriterResult> {
  const started = Date.now();
  const client = new Client({ connectionString: await findRunningEmbeddedPostgres(dataDir) });
  client.on('error', () => undefined);
  let writtenMb = 0;
  try {
    await client.connect();
    while (!signal.aborted && writtenMb < WAL_WRITER_MAX_MB) {
      await client.query(`SELECT pg_logical_emit_message(true, 'faults', repeat('x', 1000000))`);
      writtenMb += 1;
    }
    return { writtenMb };
  } catch (error) {
    const { severity, code, message } = error as { severity?: string; code?: string; message?: string };
    return severity === 'PANIC'
      ? { panic: `${code} ${message}`, panicAfterMs: Date.now() - started, writtenMb }
      : { stoppedBy: String(message ?? error), writtenMb };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `/_ready`'s failing checks now (`detail`), undefined once it answers 200. */
async function failingChecks(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${url}/_ready`, { signal: AbortSignal.timeout(5_000) });
    if (response.ok) {
      await response.arrayBuffer();
      return undefined;
    }
    return ((await response.json()) as { detail?: string }).detail ?? `HTTP ${response.status}`;
  } catch (error) {
    return `no answer (${String(error)})`;
  }
}

/** What the embedded Postgres logged when it was back: its attempts and how long it was unavailable. */
function reopenedLine(output: string): string {
  const line = output.split('\n').find((text) => text.includes('was reopened and takes connections again'));
  if (!line) return 'never logged that it was reopened';
  const { attempts, unavailableMs } = JSON.parse(line) as { attempts?: number; unavailableMs?: number };
  return `was reopened after ${attempts} attempts, ${unavailableMs} ms after it failed`;
}

const counted = (values: (string | number)[]) =>
  values.reduce<Record<string, number>>(
    (counts, value) => ({ ...counts, [value]: (counts[value] ?? 0) + 1 }),
    {},
  );

describeAsRoot('npm start: DATA_DIR full', () => {
  let root: string;
  let mountPoint: string;
  let deployment: StandaloneDeployment | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'hogbase-faults-full-disk-'));
    mountPoint = path.join(root, 'fs');
    await mkdir(mountPoint);
    await execFileAsync('mount', ['-t', 'tmpfs', '-o', 'size=512m', 'tmpfs', mountPoint]);
    const dataDir = path.join(mountPoint, 'data');
    await mkdir(dataDir, { mode: 0o700 });
    deployment = await StandaloneDeployment.start(dataDir);
  });

  afterAll(async () => {
    await deployment?.destroy();
    if (mountPoint) await execFileAsync('umount', ['--lazy', mountPoint]).catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('answers 503 while full, stays up through a PANIC of its Postgres, and is ready again by itself once space is freed; nothing acknowledged is lost', async () => {
    const started = deployment!;
    const sender = started.sender('full-disk');
    sender.start();
    try {
      await sleep(STEADY_MS);
      const filler = fill(mountPoint);
      const stopWriter = new AbortController();
      const writer = writeWalUntilItFails(started.dataDir, stopWriter.signal);
      const readiness = await sample(FULL_MS, () => started.server.readiness());
      stopWriter.abort();
      const wal = await writer;
      report(
        `DATA_DIR full for ${FULL_MS} ms: /_ready answered ${JSON.stringify(counted(readiness))}; ` +
          `WAL writer: ${JSON.stringify(wal)}`,
      );
      expect(started.server.app).toBeDefined(); // Still up: no exit on a full disk.
      // The case is about the PANIC: without it, the reopening would go untried.
      expect(wal.panic).toMatch(/^53100 /);
      expect(readiness).toContain(503);
      await rm(filler);
      const freedAt = Date.now();
      const notReady = new Map<string, number>();
      const recovery = await timeUntil('ready again after space was freed', async () => {
        const failing = await failingChecks(started.server.url);
        if (failing && !notReady.has(failing)) notReady.set(failing, Date.now() - freedAt);
        return !failing && (await started.managementStatus()) === 200;
      });
      report(
        `space freed: ready again after ${recovery} ms, without a restart; the embedded Postgres ` +
          `${reopenedLine(started.server.output())}; not ready meanwhile (first seen at ms): ` +
          JSON.stringify(Object.fromEntries(notReady)),
      );
      const warnings = started.server.warnings();
      report(`warnings logged: ${JSON.stringify(warnings)}`);
      // Once per change of state, not once per attempt to reopen.
      expect(
        Object.entries(warnings)
          .filter(([message]) => message.startsWith('the embedded Postgres'))
          .map(([, count]) => count),
      ).toEqual([1, 1]);
      await sleep(STEADY_MS);
    } catch (error) {
      await sender.stop().catch(() => undefined); // Its requests must not outlive the test.
      throw error;
    }
    const result = await sender.stop();
    // While full, capture answered 503 (retried), never 200 for events it did not store.
    expect(Object.keys(result.failures)).toEqual(expect.arrayContaining(['HTTP 503']));
    await expectEveryAcknowledgedEventListedOnce(started, 'full DATA_DIR', {
      ...result,
      ledger: sender.ledger,
    });
  });

  it('refuses a start on the full DATA_DIR naming it, and starts once space is freed', async () => {
    const started = deployment!;
    expect(await started.server.stop()).toEqual({ code: 0, signal: null });
    const filler = fill(mountPoint);
    const refused = await started.startIntruder();
    const { code } = await refused.exited;
    expect({ code, output: refused.output().trim() }).toEqual({
      code: 1,
      output: expect.stringMatching(
        new RegExp(
          `^DATA_DIR=${started.dataDir}: its filesystem (has [\\d.]+ MiB free, and at least 64 MiB are needed|is full)$`,
        ),
      ) as string,
    });
    await rm(filler);
    const restarted = Date.now();
    await started.server.start();
    report(
      `start on a full DATA_DIR refused: ${refused.output().trim()}; ready ${Date.now() - restarted} ms after a start once freed`,
    );
    expect(await started.managementStatus()).toBe(200);
  });
});
