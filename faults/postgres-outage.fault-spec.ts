import { setTimeout as sleep } from 'node:timers/promises';
import { APP_ROLE } from './harness/postgres-server';
import { faultSuite, report, sample, timeUntil, underLoad } from './harness/scenario';

/** How long Postgres stays stopped. */
const OUTAGE_MS = 15_000;
/** How long the app role may not log in (the experiment). */
const NO_LOGIN_MS = 60_000;

describe('PostgreSQL going away under load', () => {
  const suite = faultSuite();

  /**
   * While Postgres is away: ingestion reports not ready (it cannot write persons), capture stays
   * ready and keeps acknowledging (it knows the project's token), neither process exits.
   */
  async function ridesOutage(label: string, outageMs: number): Promise<void> {
    const notReadyAfter = await timeUntil(
      'ingestion to report not ready',
      async () => (await suite.deployment.ingestion.readiness()) === 503,
    );
    report(`${label}: ingestion not ready ${notReadyAfter} ms into the outage`);
    const captureReadiness = await sample(Math.max(0, outageMs - notReadyAfter), () =>
      suite.deployment.capture.readiness(),
    );
    expect(new Set(captureReadiness)).toEqual(new Set([200]));
  }

  async function readyAgain(label: string): Promise<void> {
    const since = Date.now();
    await suite.deployment.ingestion.waitReady();
    report(`${label}: ingestion ready ${Date.now() - since} ms after Postgres answered again`);
  }

  for (const mode of ['fast', 'immediate'] as const) {
    it(`pg_ctl stop -m ${mode} for ${OUTAGE_MS / 1000} s, then start`, async () => {
      const result = await underLoad(suite.deployment, `postgres-stop-${mode}`, async () => {
        await suite.deployment.postgres.stop(mode);
        await ridesOutage(`stop -m ${mode}`, OUTAGE_MS);
        await suite.deployment.postgres.start();
        await readyAgain(`stop -m ${mode}`);
      });
      // Capture never needed Postgres for a token it knows.
      expect(result.failures).toEqual({});
      await suite.verify(result);
    });
  }

  it("pg_terminate_backend of ingestion's sessions, again and again", async () => {
    let terminated = 0;
    const result = await underLoad(suite.deployment, 'terminate-backend', async () => {
      const until = Date.now() + OUTAGE_MS;
      while (Date.now() < until) {
        const rows = await suite.deployment.postgres.superuser<{ terminated: boolean }>(
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
    await suite.verify(result);
  });

  it(`LOGIN taken from the app role for ${NO_LOGIN_MS / 1000} s, its ingestion sessions killed`, async () => {
    const result = await underLoad(suite.deployment, 'no-login', async () => {
      await suite.deployment.postgres.superuser(`ALTER ROLE ${APP_ROLE} NOLOGIN`);
      try {
        await suite.deployment.postgres.superuser(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'ingestion'`,
        );
        await ridesOutage('NOLOGIN', NO_LOGIN_MS);
      } finally {
        await suite.deployment.postgres.superuser(`ALTER ROLE ${APP_ROLE} LOGIN`);
      }
      await readyAgain('NOLOGIN');
    });
    expect(result.failures).toEqual({});
    await suite.verify(result);
    report(
      `capture's warnings and errors over every outage: ${JSON.stringify(suite.deployment.capture.warnings())}`,
    );
    report(`ingestion's: ${JSON.stringify(suite.deployment.ingestion.warnings())}`);
  });
});
