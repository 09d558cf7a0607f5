import { setTimeout as sleep } from 'node:timers/promises';
import { dataDirHolder } from '@hogbase/postgres';
import { report, sample, timeUntil } from './harness/scenario';
import {
  expectEveryAcknowledgedEventListedOnce,
  StandaloneDeployment,
} from './harness/standalone-deployment';

const STEADY_MS = 4_000;

describe('npm start: a second start on the same data directory', () => {
  let deployment: StandaloneDeployment | undefined;

  beforeAll(async () => {
    deployment = await StandaloneDeployment.start();
  });

  afterAll(async () => {
    await deployment?.destroy();
  });

  /** Starts a second npm start on the data directory and expects it refused, naming the holder. */
  async function refusedIntruder(holderPid: number): Promise<void> {
    const intruder = await deployment!.startIntruder();
    const { code } = await intruder.exited;
    expect({ code, output: intruder.output() }).toEqual({
      code: 1,
      output: expect.stringContaining(`in use by another process (pid ${holderPid}`) as string,
    });
  }

  it('is refused while the first serves and during its restart after kill -9; the first loses nothing', async () => {
    const started = deployment!;
    const sender = started.sender('second-start');
    sender.start();
    try {
      await sleep(STEADY_MS);
      await refusedIntruder(started.server.app!.child.pid!);
      // The first keeps serving: capture, its readiness and a management call that reads Postgres.
      const seen = await sample(
        3_000,
        async () => `${await started.server.readiness()}/${await started.managementStatus()}`,
      );
      expect(new Set(seen)).toEqual(new Set(['200/200']));
      report(
        `second start while the first serves: refused; the first answered ${seen.length} × 200/200 after it`,
      );

      for (let round = 1; round <= 2; round++) {
        await started.server.kill();
        const restarted = Date.now();
        const ready = started.server.start();
        // During the restart's start-up: it holds DATA_DIR (crash recovery of PGlite takes seconds).
        await timeUntil('the restarted server holding DATA_DIR', async () => {
          const holder = await dataDirHolder(started.dataDir);
          return holder !== undefined && holder.pid === started.server.app?.child.pid;
        });
        await refusedIntruder(started.server.app!.child.pid!);
        await ready;
        report(
          `kill -9 #${round} and a second start during the restart: ready ${Date.now() - restarted} ms after the restart`,
        );
        expect(await started.managementStatus()).toBe(200);
        await sleep(2_000);
      }
      await sleep(STEADY_MS);
    } catch (error) {
      await sender.stop().catch(() => undefined); // Its requests must not outlive the test.
      throw error;
    }
    const result = await sender.stop();
    await expectEveryAcknowledgedEventListedOnce(started, 'second start', {
      ...result,
      ledger: sender.ledger,
    });
  });
});
