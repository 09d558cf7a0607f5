import { setTimeout as sleep } from 'node:timers/promises';
import { expectEveryAcknowledgedEventListedOnce, report, underLoad } from './harness/scenario';
import { SplitDeployment } from './harness/split-deployment';

describe('ingestion killed with SIGKILL under load', () => {
  let deployment: SplitDeployment;
  const ledger = new Set<string>();
  let distinctIds = 0;

  beforeAll(async () => {
    deployment = await SplitDeployment.start(report);
  });

  afterAll(async () => {
    await deployment?.destroy();
  });

  it('a restarted ingestion takes its partitions back and writes every acknowledged event once', async () => {
    const result = await underLoad(deployment, 'kill-ingestion', async () => {
      for (let round = 1; round <= 2; round++) {
        await deployment.ingestion.kill();
        // Capture goes on acknowledging into Kafka while ingestion is down.
        await sleep(3_000);
        const restarted = Date.now();
        await deployment.ingestion.start();
        await deployment.ingestion.waitReady();
        report(`kill -9 #${round}: ingestion ready again ${Date.now() - restarted} ms after its restart`);
        await sleep(2_000);
      }
    });
    result.ledger.forEach((uuid) => ledger.add(uuid));
    distinctIds += result.distinctIds.length;
    await expectEveryAcknowledgedEventListedOnce(deployment, ledger, distinctIds);
  });
});
