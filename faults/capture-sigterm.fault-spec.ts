import { faultSuite, report, underLoad } from './harness/scenario';

describe('capture stopped with SIGTERM under load', () => {
  const suite = faultSuite();

  it('drains: what it acknowledged is in Kafka, what it refused is sent again, and it exits 0', async () => {
    const result = await underLoad(suite.deployment, 'capture-sigterm', async () => {
      for (let round = 1; round <= 2; round++) {
        const since = Date.now();
        // Within 20 s (stopApp's bound) and with code 0, with requests arriving all along.
        expect(await suite.deployment.capture.stop()).toEqual({ code: 0, signal: null });
        report(`SIGTERM #${round}: capture exited ${Date.now() - since} ms after the signal`);
        await suite.deployment.capture.start();
        await suite.deployment.capture.waitReady();
      }
    });
    // The sender met the stopped capture: refused connections, or 503s from the draining one.
    expect(result.failedAttempts).toBeGreaterThan(0);
    await suite.verify(result);
  });
});
