import {
  READY_TIMEOUT_MS,
  startStandaloneForTest,
  type InitialCredentials,
  type StandaloneForTest,
} from './app-process';
import { managementApi, managementRequest } from './management-request';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * A backfill's runs are made up front, one per interval. Schemathesis backfilled a persons export
 * (no first event clamps its start) from the year 232: the request listed some 655,000 daily
 * intervals and built one INSERT of them, holding the event loop that every app of `npm start`
 * shares; nothing was answered again, and SIGTERM was not either (issue 29).
 */
describe('npm start: the date range of a batch-export backfill', () => {
  let standalone: StandaloneForTest | undefined;
  let managementUrl: string;
  let credentials: InitialCredentials;
  let exportsPath: string;

  const request = (method: string, requestPath: string, body?: unknown) =>
    managementRequest(managementUrl, credentials.personal_api_key, method, requestPath, body);

  const createPersonsExport = async (interval: string): Promise<string> => {
    const api = managementApi(managementUrl, credentials.personal_api_key);
    const created = await api('POST', exportsPath, {
      name: `persons every ${interval}`,
      model: 'persons',
      destination: { type: 'NoOp', config: {} },
      interval,
    });
    return created.id as string;
  };

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-backfill-range-test-');
    ({ managementUrl, credentials } = standalone);
    exportsPath = `/api/projects/${credentials.project_id}/batch_exports/`;
  }, READY_TIMEOUT_MS * 2);

  afterAll(async () => {
    await standalone?.kill();
  });

  it('refuses a range of centuries with a 400 and goes on answering', async () => {
    const id = await createPersonsExport('day');

    const backfill = await request('POST', `${exportsPath}${id}/backfills/`, {
      start_at: '0232-11-27T15:00:17Z',
    });

    expect(backfill.status).toBe(400);
    expect(backfill.body.detail).toMatch(/covers about \d+ intervals of 'day': at most 10000/);
    const listed = await request('GET', exportsPath);
    expect(listed.status).toBe(200);
    expect(listed.body.results).toEqual(expect.arrayContaining([expect.objectContaining({ id })]));
  });

  it('backfills more intervals than one INSERT could bind, and a run of it can be cancelled', async () => {
    const id = await createPersonsExport('hour');
    // 9,576 hourly runs (the project's time zone is UTC): at 8 columns each, more than the
    // 65,535 parameters of one Postgres statement.
    const start = new Date(Math.floor(Date.now() / HOUR) * HOUR - 400 * DAY);

    const backfill = await request('POST', `${exportsPath}${id}/backfills/`, {
      start_at: start.toISOString(),
      end_at: new Date(start.getTime() + 399 * DAY).toISOString(),
    });

    expect(backfill.status).toBe(201);
    const backfillId = backfill.body.backfill_id as string;
    const state = await request('GET', `${exportsPath}${id}/backfills/${backfillId}/`);
    expect(state.status).toBe(200);
    expect(state.body.progress?.total_runs).toBe(399 * 24);
    const runs = await request('GET', `${exportsPath}${id}/runs/`);
    const run = (runs.body.results as { id: string; status: string; backfill: string }[]).find(
      (candidate) => candidate.backfill === backfillId && candidate.status === 'Starting',
    );
    expect(run).toBeDefined();
    const cancelled = await request('POST', `${exportsPath}${id}/runs/${run?.id}/cancel/`);
    expect(cancelled).toEqual({ status: 200, body: { cancelled: true } });
  });

  it('stops after SIGTERM', async () => {
    const exit = await standalone?.stop();
    standalone = undefined;
    expect(exit).toEqual({ code: 0, signal: null });
  });
});
