import { setTimeout as sleep } from 'node:timers/promises';
import { APP_ROLE } from './harness/postgres-server';
import {
  eventually,
  expectEveryAcknowledgedEventListedOnce,
  report,
  sample,
  underLoad,
} from './harness/scenario';
import { SplitDeployment } from './harness/split-deployment';

/** How long Postgres stays stopped. */
const OUTAGE_MS = 15_000;
/** How long the app role may not log in (the experiment). */
const NO_LOGIN_MS = 60_000;

describe('PostgreSQL going away under load', () => {
  let deployment: SplitDeployment;
  const ledger = new Set<string>();
  let distinctIds = 0;

  beforeAll(async () => {
    deployment = await SplitDeployment.start(report);
  });

  afterAll(async () => {
    await deployment?.destroy();
  });

  async function verify(result: { ledger: Set<string>; distinctIds: string[] }): Promise<void> {
    result.ledger.forEach((uuid) => ledger.add(uuid));
    distinctIds += result.distinctIds.length;
    await expectEveryAcknowledgedEventListedOnce(deployment, ledger, distinctIds);
  }

  /**
   * While Postgres is away: ingestion reports not ready (it cannot write persons), capture stays
   * ready and keeps acknowledging (it knows the project's token), neither process exits.
   */
  async function ridesOutage(label: string, outageMs: number): Promise<void> {
    const notReadyAfter = await eventually(
      'ingestion to report not ready',
      async () => (await deployment.ingestion.readiness()) === 503,
    );
    report(`${label}: ingestion not ready ${notReadyAfter} ms into the outage`);
    const captureReadiness = await sample(Math.max(0, outageMs - notReadyAfter), () =>
      deployment.capture.readiness(),
    );
    expect(new Set(captureReadiness)).toEqual(new Set([200]));
  }

  async function readyAgain(label: string): Promise<void> {
    const since = Date.now();
    await deployment.ingestion.waitReady();
    report(`${label}: ingestion ready ${Date.now() - since} ms after Postgres answered again`);
  }

  for (const mode of ['fast', 'immediate'] as const) {
    it(`pg_ctl stop -m ${mode} for ${OUTAGE_MS / 1000} s, then start`, async () => {
      const result = await underLoad(deployment, `postgres-stop-${mode}`, async () => {
        await deployment.postgres.stop(mode);
        await ridesOutage(`stop -m ${mode}`, OUTAGE_MS);
        await deployment.postgres.start();
        await readyAgain(`stop -m ${mode}`);
      });
      // Capture never needed Postgres for a token it knows.
      expect(result.failures).toEqual({});
      await verify(result);
    });
  }

  it("pg_terminate_backend of ingestion's sessions, again and again", async () => {
    let terminated = 0;
    const result = await underLoad(deployment, 'terminate-backend', async () => {
      const until = Date.now() + OUTAGE_MS;
      while (Date.now() < until) {
        const rows = await deployment.postgres.superuser<{ terminated: boolean }>(
          `SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
            WHERE application_name = 'ingestion' AND state <> 'idle'`,
        );
        terminated += rows.filter((row) => row.terminated).length;
        await sleep(300);
      }
      await readyAgain('terminate backends');
    });
    report(`terminated ${terminated} busy ingestion sessions`);
    expect(terminated).toBeGreaterThan(0);
    await verify(result);
  });

  it(`LOGIN taken from the app role for ${NO_LOGIN_MS / 1000} s, its ingestion sessions killed`, async () => {
    const result = await underLoad(deployment, 'no-login', async () => {
      await deployment.postgres.superuser(`ALTER ROLE ${APP_ROLE} NOLOGIN`);
      try {
        await deployment.postgres.superuser(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ingestion'`,
        );
        await ridesOutage('NOLOGIN', NO_LOGIN_MS);
      } finally {
        await deployment.postgres.superuser(`ALTER ROLE ${APP_ROLE} LOGIN`);
      }
      await readyAgain('NOLOGIN');
    });
    expect(result.failures).toEqual({});
    await verify(result);
    report(
      `capture's warnings and errors over every outage: ${JSON.stringify(deployment.capture.warnings())}`,
    );
    report(`ingestion's: ${JSON.stringify(deployment.ingestion.warnings())}`);
  });
});
