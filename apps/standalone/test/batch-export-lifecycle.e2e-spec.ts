import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStandaloneForTest, waitForApp, type StandaloneForTest } from './app-process';
import {
  BatchExportsApi,
  BatchReceiver,
  captureEvents,
  type ExportRun,
  type TestEvent,
} from './batch-export-test.util';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const FIVE_MINUTES = 5 * MINUTE;
const LAG_SECONDS = 1;
/** The workers' scheduling tick (libs/workers). */
const TICK_MS = 10_000;
/** Past a boundary, the scheduler has had two ticks and a due run its lag: long enough for a run to exist. */
const AFTER_BOUNDARY_MS = LAG_SECONDS * 1_000 + 2 * TICK_MS + 5_000;

function events(count: number, name: string, timestampOf: (index: number) => number): TestEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    uuid: randomUUID(),
    event: name,
    distinctId: `user-${index % 7}`,
    timestamp: new Date(timestampOf(index)),
  }));
}

const sorted = (values: Iterable<string>) => [...values].sort();
const uuidsOf = (list: { uuid: string }[]) => list.map((event) => event.uuid);

/**
 * The batch-export lifecycle on `npm start`, to a loopback PostHog `/batch/` receiver: a backfill
 * followed by the scheduled runs, pause and unpause (with and without backfill), cancelling a run
 * in progress and retrying a failed one.
 *
 * NOTE: the scheduled cases wait for one real five-minute boundary. Their exports are set up in
 * `beforeAll`, and the cancel and retry tests run first, while the clock goes to that boundary.
 */
describe('npm start: the batch-export lifecycle', () => {
  let standalone: StandaloneForTest;
  let receiver: BatchReceiver;
  let api: BatchExportsApi;
  /** The five-minute boundary the scheduled cases are about; [boundary - 5 min, boundary) is "the interval". */
  let boundary: number;
  /** The exports and events of the scheduled cases. */
  let continuous: { id: string; backfillId: string; older: TestEvent[]; newer: TestEvent[] };
  let paused: { thenBackfilled: string; thenResumed: string; insideInterval: string; createdPaused: string };

  const wait = (what: string, check: () => Promise<boolean>, timeoutMs = 60_000) =>
    waitForApp(standalone.server, what, check, timeoutMs);

  /** Waits until the scheduler has had its chance at the interval that ends at `boundary`. */
  const pastBoundary = async () => {
    const remaining = boundary + AFTER_BOUNDARY_MS - Date.now();
    if (remaining > 0) await sleep(remaining);
  };

  const runOf = async (exportId: string, intervalEnd: number): Promise<ExportRun | undefined> =>
    (await api.runs(exportId)).find(
      (run) => run.backfill === null && Date.parse(run.data_interval_end) === intervalEnd,
    );

  beforeAll(async () => {
    standalone = await startStandaloneForTest('hogbase-batch-export-lifecycle-', {
      BATCH_EXPORT_LAG_SECONDS: String(LAG_SECONDS),
    });
    receiver = await BatchReceiver.start();
    api = new BatchExportsApi(standalone.managementUrl, standalone.credentials);
    const { captureUrl, credentials } = standalone;

    // The interval in progress must leave room to set everything up (about a minute) before it
    // ends, and the events sent "now" must be clear of its start.
    const intoInterval = Date.now() % FIVE_MINUTES;
    if (intoInterval > 3 * MINUTE) await sleep(FIVE_MINUTES - intoInterval + 20_000);
    else if (intoInterval < 20_000) await sleep(20_000 - intoInterval);
    boundary = Math.ceil(Date.now() / FIVE_MINUTES) * FIVE_MINUTES;
    const intervalStart = boundary - FIVE_MINUTES;

    // Case 1: events of the half hour before the interval (backfilled), one before that (outside).
    const backfillStart = intervalStart - 30 * MINUTE;
    const older = events(12, 'before-export', (index) => backfillStart + MINUTE + index * 150_000);
    const tooOld = events(1, 'before-export', () => intervalStart - 90 * MINUTE);
    await captureEvents(captureUrl, credentials.project_api_key, [...older, ...tooOld]);
    await wait(
      'the older events to be ingested',
      async () =>
        (await api.countEvents('before-export', new Date(intervalStart - 2 * HOUR), new Date(boundary))) ===
        13,
    );
    // NOTE: the events of the cancel and retry tests are timestamped hours ago but captured after
    // these exports exist: late arrivals, which a scheduled run owns (libs/workers/src/run-query.util.ts).
    // The scheduled exports take only this case's events.
    const continuousId = await api.createHttpExport(receiver, 'continuous', {
      interval: 'every 5 minutes',
      includeEvents: ['before-export', 'after-export'],
    });
    const backfill = await api.request('POST', api.path(`${continuousId}/backfills/`), {
      start_at: new Date(backfillStart).toISOString(),
      end_at: new Date(intervalStart).toISOString(),
    });
    expect(backfill.status).toBe(201);

    // Case 2: three exports the scheduler sees unpaused, and one created paused.
    paused = {
      thenBackfilled: await api.createHttpExport(receiver, 'paused-then-backfilled', {
        interval: 'every 5 minutes',
        includeEvents: ['after-export'],
      }),
      thenResumed: await api.createHttpExport(receiver, 'paused-then-resumed', {
        interval: 'every 5 minutes',
        includeEvents: ['after-export'],
      }),
      insideInterval: await api.createHttpExport(receiver, 'paused-inside-interval', {
        interval: 'every 5 minutes',
        includeEvents: ['after-export'],
      }),
      createdPaused: await api.createHttpExport(receiver, 'created-paused', {
        interval: 'every 5 minutes',
        paused: true,
        includeEvents: ['after-export'],
      }),
    };

    // Sent after the exports exist, timestamped now: the scheduled run of the interval exports them.
    const newer = events(8, 'after-export', () => Date.now());
    const tooNew = events(1, 'after-export', () => boundary + 10 * MINUTE);
    await captureEvents(captureUrl, credentials.project_api_key, [...newer, ...tooNew]);
    continuous = { id: continuousId, backfillId: backfill.body.backfill_id as string, older, newer };

    // Two ticks, so that the scheduler has seen the unpaused exports (and set where they resume).
    await sleep(2 * TICK_MS + 2_000);
    for (const id of [paused.thenBackfilled, paused.thenResumed, paused.insideInterval]) {
      expect((await api.request('POST', api.path(`${id}/pause/`))).body.paused).toBe(true);
    }
    expect((await api.request('POST', api.path(`${paused.insideInterval}/unpause/`), {})).body.paused).toBe(
      false,
    );
    // The set-up is worthless if a tick after the unpause could fall past the boundary.
    if (Date.now() > boundary - TICK_MS - 5_000) {
      throw new Error(`set-up ended ${boundary - Date.now()} ms before the boundary: too late`);
    }
  }, 5 * MINUTE);

  afterAll(async () => {
    await standalone?.stop();
    await receiver?.close();
  });

  describe('cancel and retry', () => {
    it(
      'cancels a run in progress: it ends Cancelled and the receiver gets no more batches',
      async () => {
        // 15,000 events in one hour: two chunks of 10,000 rows, sent as three 5,000-event bodies.
        const hour = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
        const sent = events(
          15_000,
          'slow-export',
          (index) => hour + MINUTE + Math.floor((index * 58 * MINUTE) / 15_000),
        );
        receiver.behave('cancel', { delayMs: 3_000 });
        await captureEvents(standalone.captureUrl, standalone.credentials.project_api_key, sent);
        await wait(
          'the 15,000 events to be ingested',
          async () =>
            (await api.countEvents('slow-export', new Date(hour), new Date(hour + HOUR))) === 15_000,
          120_000,
        );
        const exportId = await api.createHttpExport(receiver, 'cancel', { interval: 'hour' });
        const backfill = await api.request('POST', api.path(`${exportId}/backfills/`), {
          start_at: new Date(hour).toISOString(),
          end_at: new Date(hour + HOUR).toISOString(),
        });
        expect(backfill.status).toBe(201);

        let run: ExportRun | undefined;
        await wait('the run to send its first body', async () => {
          [run] = await api.runs(exportId);
          return run?.status === 'Running' && receiver.requests('cancel') >= 1;
        });
        const runPath = api.path(`${exportId}/runs/${run!.id}/`);
        const cancelled = await api.request('POST', `${runPath}cancel/`);
        expect(cancelled).toEqual({ status: 200, body: { cancelled: true } });
        expect((await api.runs(exportId))[0].status).toBe('Cancelled');

        // The worker notices at the end of the chunk it is sending, and logs that it stopped.
        let stoppedAfter: number | undefined;
        await wait('the worker to stop the run', async () => {
          const logs = await api.request('GET', api.path(`${exportId}/logs/`));
          const stopped = (logs.body.results as { run_id: string | null; message: string }[]).find(
            (entry) => entry.run_id === run!.id && entry.message.startsWith('Run cancelled after'),
          );
          stoppedAfter = stopped && Number(/after (\d+) records/.exec(stopped.message)?.[1]);
          return stopped !== undefined;
        });
        const requestsWhenStopped = receiver.requests('cancel');
        // Long enough for the bodies of a run that went on to arrive.
        await sleep(3 * 3_000 + 2_000);
        expect(receiver.requests('cancel')).toBe(requestsWhenStopped);
        const delivered = uuidsOf(receiver.events('cancel'));
        // What the worker says it sent before it stopped is what arrived, and not everything.
        expect(delivered.length).toBe(stoppedAfter);
        expect(delivered.length).toBeLessThan(sent.length);
        expect(new Set(delivered).size).toBe(delivered.length);
        const sentUuids = new Set(uuidsOf(sent));
        expect(delivered.filter((uuid) => !sentUuids.has(uuid))).toEqual([]);

        const [after] = await api.runs(exportId);
        expect(after).toMatchObject({ id: run!.id, status: 'Cancelled' });
        // Its only run cancelled, the backfill is Cancelled too.
        const backfillState = await api.request(
          'GET',
          api.path(`${exportId}/backfills/${backfill.body.backfill_id as string}/`),
        );
        expect(backfillState.body.status).toBe('Cancelled');
      },
      5 * MINUTE,
    );

    it(
      'retries a failed run: the retry exports the interval, each event once',
      async () => {
        const hour = Math.floor(Date.now() / HOUR) * HOUR - 7 * HOUR;
        const sent = events(20, 'retried-export', (index) => hour + MINUTE + index * 2 * MINUTE);
        await captureEvents(standalone.captureUrl, standalone.credentials.project_api_key, sent);
        await wait(
          'the events to be ingested',
          async () => (await api.countEvents('retried-export', new Date(hour), new Date(hour + HOUR))) === 20,
        );
        // 400 is not worth retrying: the run fails at once.
        receiver.behave('retry', { status: 400 });
        const exportId = await api.createHttpExport(receiver, 'retry', { interval: 'hour' });
        const backfill = await api.request('POST', api.path(`${exportId}/backfills/`), {
          start_at: new Date(hour).toISOString(),
          end_at: new Date(hour + HOUR).toISOString(),
        });
        expect(backfill.status).toBe(201);
        let failed: ExportRun | undefined;
        await wait('the run to fail', async () => {
          [failed] = await api.runs(exportId);
          return failed?.status === 'Failed';
        });
        expect(failed!.latest_error).toContain('answered 400');
        expect(receiver.requests('retry')).toBeGreaterThanOrEqual(1);
        expect(receiver.events('retry')).toEqual([]);

        receiver.behave('retry', { status: 200 });
        const retried = await api.request('POST', api.path(`${exportId}/runs/${failed!.id}/retry/`));
        expect(retried.status).toBe(200);
        const retryBackfillId = retried.body.backfill_id as string;
        await wait(
          'the retry to complete',
          async () => (await api.backfill(exportId, retryBackfillId)).status === 'Completed',
        );

        const runs = await api.runs(exportId);
        expect(
          runs.map((run) => ({
            status: run.status,
            records: run.records_completed,
            start: run.data_interval_start,
            backfill: run.backfill,
          })),
        ).toEqual([
          { status: 'Completed', records: 20, start: failed!.data_interval_start, backfill: retryBackfillId },
          {
            status: 'Failed',
            records: 0,
            start: failed!.data_interval_start,
            backfill: backfill.body.backfill_id,
          },
        ]);
        const delivered = uuidsOf(receiver.events('retry'));
        expect(sorted(delivered)).toEqual(sorted(uuidsOf(sent)));
      },
      3 * MINUTE,
    );
  });

  describe('around one five-minute boundary', () => {
    it(
      'a scheduled run after a backfill exports only the newer events: each event once',
      async () => {
        const { id, backfillId, older, newer } = continuous;
        await wait(
          'the backfill to complete',
          async () => (await api.backfill(id, backfillId)).status === 'Completed',
        );
        await pastBoundary();
        await wait(
          'the scheduled run of the interval to complete',
          async () => (await runOf(id, boundary))?.status === 'Completed',
        );

        const runs = await api.runs(id);
        const backfilled = runs.filter((run) => run.backfill === backfillId);
        const scheduled = runs.filter((run) => run.backfill === null);
        // Six intervals of five minutes backfilled; the scheduler started with the interval in progress.
        expect(backfilled.map((run) => run.status)).toEqual(Array(6).fill('Completed'));
        expect(backfilled.reduce((sum, run) => sum + run.records_completed, 0)).toBe(older.length);
        expect(
          scheduled.map((run) => ({
            end: Date.parse(run.data_interval_end),
            records: run.records_completed,
          })),
        ).toEqual([{ end: boundary, records: newer.length }]);

        const delivered = uuidsOf(receiver.events('continuous'));
        expect(sorted(delivered)).toEqual(sorted(uuidsOf([...older, ...newer])));
      },
      8 * MINUTE,
    );

    it(
      'creates no run for an interval that ends while the export is paused',
      async () => {
        await pastBoundary();
        expect(await api.runs(paused.thenBackfilled)).toEqual([]);
        expect(await api.runs(paused.thenResumed)).toEqual([]);
        expect(await api.runs(paused.createdPaused)).toEqual([]);
      },
      8 * MINUTE,
    );

    it(
      'after a pause and unpause inside the interval, the interval in progress still runs',
      async () => {
        await pastBoundary();
        await wait(
          'the run of the interval to complete',
          async () => (await runOf(paused.insideInterval, boundary))?.status === 'Completed',
        );
        expect(await api.runs(paused.insideInterval)).toHaveLength(1);
        expect(sorted(uuidsOf(receiver.events('paused-inside-interval')))).toEqual(
          sorted(uuidsOf(continuous.newer)),
        );
      },
      8 * MINUTE,
    );

    it(
      'unpause without backfill skips the interval that ended while paused',
      async () => {
        await pastBoundary();
        const unpaused = await api.request('POST', api.path(`${paused.thenResumed}/unpause/`), {});
        expect(unpaused.body.paused).toBe(false);
        // Two ticks and the lag: a run for the skipped interval would have been created by then.
        await sleep(AFTER_BOUNDARY_MS);
        expect(await api.runs(paused.thenResumed)).toEqual([]);
        expect(receiver.requests('paused-then-resumed')).toBe(0);
      },
      8 * MINUTE,
    );

    it(
      'unpause with backfill runs the interval that ended while paused',
      async () => {
        await pastBoundary();
        const unpaused = await api.request('POST', api.path(`${paused.thenBackfilled}/unpause/`), {
          backfill: true,
        });
        expect(unpaused.body.paused).toBe(false);
        await wait(
          'the run of the paused interval to complete',
          async () => (await runOf(paused.thenBackfilled, boundary))?.status === 'Completed',
        );
        expect(await api.runs(paused.thenBackfilled)).toHaveLength(1);
        expect(sorted(uuidsOf(receiver.events('paused-then-backfilled')))).toEqual(
          sorted(uuidsOf(continuous.newer)),
        );
      },
      8 * MINUTE,
    );

    it(
      'unpause with backfill of an export created paused runs the intervals since it was created',
      async () => {
        await pastBoundary();
        // The scheduler never saw it running: the gap starts with the interval it was created in.
        const unpaused = await api.request('POST', api.path(`${paused.createdPaused}/unpause/`), {
          backfill: true,
        });
        expect(unpaused.body.paused).toBe(false);
        await wait(
          'the run of the paused interval to complete',
          async () => (await runOf(paused.createdPaused, boundary))?.status === 'Completed',
        );
        expect(await api.runs(paused.createdPaused)).toHaveLength(1);
        expect(sorted(uuidsOf(receiver.events('created-paused')))).toEqual(sorted(uuidsOf(continuous.newer)));
      },
      8 * MINUTE,
    );
  });
});
