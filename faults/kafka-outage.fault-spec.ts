import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, expectEveryAcknowledgedEventListedOnce, report, underLoad } from './harness/scenario';
import { SplitDeployment } from './harness/split-deployment';

/** How long the broker stays away. */
const OUTAGE_MS = 15_000;

describe('the Kafka broker going away under load', () => {
  let deployment: SplitDeployment;
  const ledger = new Set<string>();
  let distinctIds = 0;

  beforeAll(async () => {
    deployment = await SplitDeployment.start(report);
  });

  afterAll(async () => {
    await deployment?.destroy();
  });

  /** Both services answer 503 on /_ready while the broker is away: their job needs it. */
  async function expectBothNotReady(): Promise<void> {
    await eventually(
      'capture to report not ready',
      async () => (await deployment.capture.readiness()) === 503,
    );
    await eventually(
      'ingestion to report not ready',
      async () => (await deployment.ingestion.readiness()) === 503,
    );
  }

  async function expectBothReadyAgain(label: string, since: number): Promise<void> {
    await deployment.capture.waitReady();
    await deployment.ingestion.waitReady();
    report(`${label}: capture and ingestion ready again ${Date.now() - since} ms after the broker answered`);
  }

  it('SIGTERM of the broker: capture refuses with 503, ingestion waits, both resume alone', async () => {
    const result = await underLoad(deployment, 'broker-sigterm', async () => {
      await deployment.kafka.stop();
      await expectBothNotReady();
      await sleep(OUTAGE_MS);
      await deployment.kafka.start();
      await expectBothReadyAgain('broker SIGTERM', Date.now());
    });
    expect(result.failures['HTTP 503']).toBeGreaterThan(0);
    result.ledger.forEach((uuid) => ledger.add(uuid));
    distinctIds += result.distinctIds.length;
    await expectEveryAcknowledgedEventListedOnce(deployment, ledger, distinctIds);
  });

  it('kill -9 of the broker, and both services stopped and started while it is dead', async () => {
    const result = await underLoad(deployment, 'broker-kill', async () => {
      await deployment.kafka.kill();
      await expectBothNotReady();
      // A dead broker must not hold a stop: each exits 0 within 20 s of SIGTERM (stopApp's bound).
      expect(await deployment.capture.stop()).toEqual({ code: 0, signal: null });
      expect(await deployment.ingestion.stop()).toEqual({ code: 0, signal: null });
      // Started while the broker is dead, they serve their probes (not ready) and wait for it.
      await deployment.capture.start();
      await deployment.ingestion.start();
      await expectBothNotReady();
      await sleep(OUTAGE_MS);
      await deployment.kafka.start();
      await expectBothReadyAgain('broker kill -9', Date.now());
    });
    result.ledger.forEach((uuid) => ledger.add(uuid));
    distinctIds += result.distinctIds.length;
    await expectEveryAcknowledgedEventListedOnce(deployment, ledger, distinctIds);
    report(
      `capture's warnings and errors over both outages: ${JSON.stringify(deployment.capture.warnings())}`,
    );
    report(`ingestion's: ${JSON.stringify(deployment.ingestion.warnings())}`);
  });
});
