import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { eventually, report, sample } from './harness/scenario';
import {
  expectEveryAcknowledgedEventListedOnce,
  StandaloneDeployment,
} from './harness/standalone-deployment';

const execFileAsync = promisify(execFile);
const STEADY_MS = 4_000;
/** How long DATA_DIR stays full under load. */
const FULL_MS = 10_000;
/** Mounting the small filesystem DATA_DIR fills takes root. */
const describeAsRoot = process.getuid?.() === 0 ? describe : describe.skip;

/** Fills the filesystem of `mountPoint` to its last block with one file, whose path it returns. */
function fill(mountPoint: string): string {
  const filler = path.join(mountPoint, 'filler');
  // dd stops (and exits 1) at ENOSPC: that is the point.
  spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' });
  return filler;
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

  it('answers 503 while full, stays up, and is ready again by itself once space is freed; nothing acknowledged is lost', async () => {
    const started = deployment!;
    const sender = started.sender('full-disk');
    sender.start();
    try {
      await sleep(STEADY_MS);
      const filler = fill(mountPoint);
      const readiness = await sample(FULL_MS, () => started.server.readiness());
      report(`DATA_DIR full for ${FULL_MS} ms: /_ready answered ${JSON.stringify(counted(readiness))}`);
      expect(started.server.app).toBeDefined(); // Still up: no exit on a full disk.
      await rm(filler);
      const recovery = await eventually('ready again after space was freed', async () => {
        return (await started.server.readiness()) === 200 && (await started.managementStatus()) === 200;
      });
      report(`space freed: ready again after ${recovery} ms, without a restart`);
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
