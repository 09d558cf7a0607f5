import { setTimeout as sleep } from 'node:timers/promises';
import { faultSuite, report, timeUntil, underLoad } from './harness/scenario';

/** How long the broker stays away. */
const OUTAGE_MS = 15_000;

describe('the Kafka broker going away under load', () => {
  const suite = faultSuite();

  /** Both services answer 503 on /_ready while the broker is away: their job needs it. */
  async function expectBothNotReady(): Promise<void> {
    await timeUntil(
      'capture to report not ready',
      async () => (await suite.deployment.capture.readiness()) === 503,
    );
    await timeUntil(
      'ingestion to report not ready',
      async () => (await suite.deployment.ingestion.readiness()) === 503,
    );
  }

  async function expectBothReadyAgain(label: string, since: number): Promise<void> {
    await suite.deployment.capture.waitReady();
    await suite.deployment.ingestion.waitReady();
    report(`${label}: capture and ingestion ready again ${Date.now() - since} ms after the broker answered`);
  }

  it('SIGTERM of the broker: capture refuses with 503, ingestion waits, both resume alone', async () => {
    const result = await underLoad(suite.deployment, 'broker-sigterm', async () => {
      await suite.deployment.kafka.stop();
      await expectBothNotReady();
      await sleep(OUTAGE_MS);
      await suite.deployment.kafka.start();
      await expectBothReadyAgain('broker SIGTERM', Date.now());
    });
    expect(result.failures['HTTP 503']).toBeGreaterThan(0);
    await suite.verify(result);
  });

  it('kill -9 of the broker, and both services stopped and started while it is dead', async () => {
    const result = await underLoad(suite.deployment, 'broker-kill', async () => {
      await suite.deployment.kafka.kill();
      await expectBothNotReady();
      // A dead broker must not hold a stop: each exits 0 within 20 s of SIGTERM (stopApp's bound).
      expect(await suite.deployment.capture.stop()).toEqual({ code: 0, signal: null });
      expect(await suite.deployment.ingestion.stop()).toEqual({ code: 0, signal: null });
      // Started while the broker is dead, they serve their probes (not ready) and wait for it.
      await suite.deployment.capture.start();
      await suite.deployment.ingestion.start();
      await expectBothNotReady();
      await sleep(OUTAGE_MS);
      await suite.deployment.kafka.start();
      await expectBothReadyAgain('broker kill -9', Date.now());
    });
    await suite.verify(result);
    report(
      `capture's warnings and errors over both outages: ${JSON.stringify(suite.deployment.capture.warnings())}`,
    );
    report(`ingestion's: ${JSON.stringify(suite.deployment.ingestion.warnings())}`);
  });
});
