import { setTimeout as sleep } from 'node:timers/promises';
import { faultSuite, report, underLoad } from './harness/scenario';

describe('ingestion killed with SIGKILL under load', () => {
  const suite = faultSuite();

  it('a restarted ingestion takes its partitions back and writes every acknowledged event once', async () => {
    const result = await underLoad(suite.deployment, 'kill-ingestion', async () => {
      for (let round = 1; round <= 2; round++) {
        await suite.deployment.ingestion.kill();
        // Capture goes on acknowledging into Kafka while ingestion is down.
        await sleep(3_000);
        const restarted = Date.now();
        await suite.deployment.ingestion.start();
        await suite.deployment.ingestion.waitReady();
        report(`kill -9 #${round}: ingestion ready again ${Date.now() - restarted} ms after its restart`);
        await sleep(2_000);
      }
    });
    await suite.verify(result);
  });
});
