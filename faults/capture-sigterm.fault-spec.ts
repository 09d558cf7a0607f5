import { expectEveryAcknowledgedEventListedOnce, report, underLoad } from './harness/scenario';
import { SplitDeployment } from './harness/split-deployment';

describe('capture stopped with SIGTERM under load', () => {
  let deployment: SplitDeployment;
  const ledger = new Set<string>();
  let distinctIds = 0;

  beforeAll(async () => {
    deployment = await SplitDeployment.start(report);
  });

  afterAll(async () => {
    await deployment?.destroy();
  });

  it('drains: what it acknowledged is in Kafka, what it refused is sent again, and it exits 0', async () => {
    const result = await underLoad(deployment, 'capture-sigterm', async () => {
      for (let round = 1; round <= 2; round++) {
        const since = Date.now();
        // Within 20 s (stopApp's bound) and with code 0, with requests arriving all along.
        expect(await deployment.capture.stop()).toEqual({ code: 0, signal: null });
        report(`SIGTERM #${round}: capture exited ${Date.now() - since} ms after the signal`);
        await deployment.capture.start();
        await deployment.capture.waitReady();
      }
    });
    // The sender met the stopped capture: refused connections, or 503s from the draining one.
    expect(result.failedAttempts).toBeGreaterThan(0);
    result.ledger.forEach((uuid) => ledger.add(uuid));
    distinctIds += result.distinctIds.length;
    await expectEveryAcknowledgedEventListedOnce(deployment, ledger, distinctIds);
  });
});
