import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { eventually } from '@hogbase/test-support';
import { report } from './harness/scenario';
import { WorkersDeployment, type RunRow } from './harness/workers-process';

const HOUR = 3_600_000;
/** Events in a kill scenario's hour: enough for a run of several seconds, to stop it mid-run. */
const EVENTS_PER_HOUR = Number(process.env.FAULTS_EXPORT_EVENTS_PER_HOUR ?? 200_000);
/**
 * Events in the SIGTERM scenario's hour: the stop lets a run go on for 8 s, so the run must be long
 * enough not to finish within them (200,000 rows took about 12 s on a 2-core machine).
 */
const SIGTERM_EVENTS = Math.round(EVENTS_PER_HOUR * 2.5);
/** The seed's events on the first and the last microsecond of each hour (and as many just outside). */
const AT_BOUNDS_INSIDE = 200;
/**
 * A killed worker's run waits for its heartbeat to lapse (30 s), then for the retry's back-off
 * (30 s, doubling): a few minutes at most, then the rest of the run.
 */
const RUN_TIMEOUT_MS = 8 * 60_000;
const POLL_MS = 100;

/**
 * Polls the run until `done` holds, failing at once when it ends otherwise (Failed, Cancelled, or
 * Completed before the scenario could stop its worker) or when a worker exits on its own.
 */
async function waitForRun(
  deployment: WorkersDeployment,
  runId: string,
  what: string,
  done: (run: RunRow) => boolean,
): Promise<RunRow> {
  let last: RunRow | undefined;
  return eventually(
    what,
    async () => {
      const run = (last = await deployment.run(runId));
      if (done(run)) return run;
      if (
        ['Completed', 'Failed', 'Cancelled'].includes(run.status) ||
        deployment.unexpectedExits().length > 0
      ) {
        throw new Error(
          `the run is ${run.status} (${run.records_completed} records, error ${String(run.latest_error)}) ` +
            `while waiting for ${what}; unexpected exits: ${deployment.unexpectedExits().join('\n')}\n` +
            deployment.workers.output(),
        );
      }
      return undefined;
    },
    {
      timeoutMs: RUN_TIMEOUT_MS,
      intervalMs: POLL_MS,
      context: () => `${JSON.stringify(last)}\n${deployment.workers.output()}`,
    },
  );
}

interface Interrupted {
  /** The run as the stopped worker left it. */
  atStop: RunRow;
  final: RunRow;
  /** From the signal to the run Completed by the next worker. */
  recoveryMs: number;
}

/**
 * Starts a worker on the run, stops it with `interrupt` once the run has stored progress (Running,
 * some records, not all), calls `afterStop` with the run as the stopped worker left it, starts
 * another worker and waits for the run to complete; that worker is then stopped (SIGTERM, exit 0).
 */
async function interruptedRun(
  deployment: WorkersDeployment,
  { runId, backfillId }: { runId: string; backfillId: string },
  interrupt: () => Promise<void>,
  afterStop: (run: RunRow) => Promise<void> = () => Promise.resolve(),
): Promise<Interrupted> {
  await deployment.workers.start();
  await waitForRun(
    deployment,
    runId,
    'the run to store progress',
    (run) =>
      run.status === 'Running' &&
      run.records_completed > 0 &&
      run.records_completed < (run.records_total_count ?? Infinity),
  );
  const since = Date.now();
  await interrupt();
  const atStop = await deployment.run(runId);
  if (atStop.status === 'Completed') {
    throw new Error(
      'the run completed before its worker was gone (within the 8 s a stop grants): ' +
        'nothing to resume; raise FAULTS_EXPORT_EVENTS_PER_HOUR',
    );
  }
  await afterStop(atStop);
  await deployment.workers.start();
  const final = await waitForRun(
    deployment,
    runId,
    'the run to complete',
    (run) => run.status === 'Completed',
  );
  const recoveryMs = Date.now() - since;
  // What the user sees of the backfill: its one run completed, so it did.
  expect(await deployment.backfillStatus(backfillId)).toBe('Completed');
  expect(await deployment.workers.stop()).toEqual({ code: 0, signal: null });
  return { atStop, final, recoveryMs };
}

/** Rows of the destination table by uuid, with the transaction that last wrote each (`xmin`). */
async function destinationRows(
  deployment: WorkersDeployment,
  table: string,
): Promise<{ uuid: string; xmin: string; timestamp: Date; team_id: number }[]> {
  return deployment.destination(
    async (client) =>
      (
        await client.query<{ uuid: string; xmin: string; timestamp: Date; team_id: number }>(
          `SELECT uuid, xmin::text AS xmin, timestamp, team_id FROM public.${table}`,
        )
      ).rows,
  );
}

/** The uuids that occur more than once. */
function repeatsOf(uuids: readonly string[]): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const uuid of uuids) (seen.has(uuid) ? repeated : seen).add(uuid);
  return [...repeated];
}

describe('a batch-export worker killed or stopped mid-run', () => {
  let deployment: WorkersDeployment | undefined;
  // One past hour per scenario, each well over the export lag (60 s) ago.
  const currentHour = Math.floor(Date.now() / HOUR) * HOUR;
  const hours = {
    postgresKill: new Date(currentHour - 3 * HOUR),
    s3Kill: new Date(currentHour - 5 * HOUR),
    postgresSigterm: new Date(currentHour - 7 * HOUR),
  };
  const seeded = [
    { start: hours.postgresKill, events: EVENTS_PER_HOUR },
    { start: hours.s3Kill, events: EVENTS_PER_HOUR },
    { start: hours.postgresSigterm, events: SIGTERM_EVENTS },
  ];
  let expected = new Map<number, number>();

  beforeAll(async () => {
    deployment = await WorkersDeployment.start(report);
    expected = await deployment.seedEvents(seeded);
  });

  afterAll(async () => {
    if (deployment) {
      report(`workers' warnings: ${JSON.stringify(deployment.workers.warnings())}`);
      await deployment.destroy();
    }
  });

  const current = () => {
    if (!deployment) throw new Error('the deployment did not start');
    return deployment;
  };

  /** The events of the hour as a run reads them (FINAL): what the destination must hold, once each. */
  function eventsOf(hourStart: Date): number {
    const count = expected.get(hourStart.getTime());
    // The seed's own count, so that a seed that wrote nothing cannot make the verdicts pass.
    const hour = seeded.find(({ start }) => start.getTime() === hourStart.getTime());
    expect(count).toBe((hour?.events ?? 0) + AT_BOUNDS_INSIDE);
    return count ?? 0;
  }

  /**
   * The Postgres verdict: every event of the hour once, nothing outside it; and the rows of the
   * chunks the stopped worker had stored progress for were not written again (the run went on
   * after its cursor instead of starting the interval over).
   */
  async function expectPostgresExactlyOnce(
    table: string,
    hourStart: Date,
    outcome: Interrupted,
    writtenBeforeResume: Map<string, string>,
  ): Promise<void> {
    const events = eventsOf(hourStart);
    const rows = await destinationRows(current(), table);
    const end = hourStart.getTime() + HOUR;
    const outside = rows.filter(
      (row) => row.timestamp.getTime() < hourStart.getTime() || row.timestamp.getTime() >= end,
    );
    const untouched = rows.filter((row) => writtenBeforeResume.get(row.uuid) === row.xmin).length;
    report(
      `${table}: ${rows.length} rows for ${events} events; the stopped worker had stored ` +
        `${outcome.atStop.records_completed} records (attempt ${outcome.atStop.attempts}, ` +
        `${writtenBeforeResume.size} rows committed), ${untouched} of them kept as written; ` +
        `completed by attempt ${outcome.final.attempts} ${outcome.recoveryMs} ms after the signal`,
    );
    expect({
      repeated: repeatsOf(rows.map((row) => row.uuid)).slice(0, 5),
      outside: outside.slice(0, 5).map((row) => row.uuid),
      otherTeams: rows.filter((row) => row.team_id !== current().project.id).length,
    }).toEqual({ repeated: [], outside: [], otherTeams: 0 });
    expect(rows).toHaveLength(events);
    // A resumed run counts the records its earlier attempts stored plus its own: the hour's events.
    expect(outcome.final).toMatchObject({ records_completed: events, records_total_count: events });
    expect(outcome.final.attempts).toBeGreaterThan(outcome.atStop.attempts);
    expect(untouched).toBe(outcome.atStop.records_completed);
  }

  it('kill -9 mid-run, Postgres destination: another worker resumes after the cursor; every event once', async () => {
    const deployment = current();
    const table = 'events_kill';
    const backfill = await deployment.createBackfilledExport(
      'kill -9 postgres',
      { type: 'Postgres', config: deployment.postgresDestination(table) },
      hours.postgresKill,
    );
    let writtenBeforeResume = new Map<string, string>();
    const outcome = await interruptedRun(
      deployment,
      backfill,
      () => deployment.workers.kill(),
      async () => {
        writtenBeforeResume = new Map(
          (await destinationRows(deployment, table)).map((row) => [row.uuid, row.xmin]),
        );
      },
    );
    await expectPostgresExactlyOnce(table, hours.postgresKill, outcome, writtenBeforeResume);
    expect(deployment.unexpectedExits()).toEqual([]);
  });

  it('kill -9 mid-run, S3 destination: another worker restarts the interval and rewrites the same keys; every event once', async () => {
    const deployment = current();
    const s3 = await deployment.s3Server();
    const bucket = await s3.createBucket();
    const prefix = 'kill-9';
    const backfill = await deployment.createBackfilledExport(
      'kill -9 s3',
      {
        type: 'S3',
        config: {
          bucket_name: bucket,
          region: 'us-east-1',
          prefix,
          endpoint_url: s3.endpoint,
          aws_access_key_id: 'hogbase-test',
          aws_secret_access_key: 'hogbase-test',
          compression: 'gzip',
          // Several objects, completed one after the other: the killed attempt leaves some behind.
          max_file_size_mb: 1,
        },
      },
      hours.s3Kill,
    );
    const listObjects = async () => {
      const objects = new Map<string, Date>();
      let token: string | undefined;
      do {
        const page = await s3.client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
        );
        for (const object of page.Contents ?? []) {
          if (object.Key && object.LastModified) objects.set(object.Key, object.LastModified);
        }
        token = page.NextContinuationToken;
      } while (token);
      return objects;
    };
    let leftByKilled = new Map<string, Date>();
    const outcome = await interruptedRun(
      deployment,
      backfill,
      () => deployment.workers.kill(),
      async () => {
        leftByKilled = await listObjects();
      },
    );

    const events = eventsOf(hours.s3Kill);
    const objects = await listObjects();
    const read = async (key: string) => {
      const object = await s3.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await (object.Body?.transformToByteArray() ?? Promise.resolve(new Uint8Array())));
    };
    const manifestKeys = [...objects.keys()].filter((key) => key.endsWith('_manifest.json'));
    const dataKeys = [...objects.keys()].filter((key) => !key.endsWith('_manifest.json')).sort();
    expect(manifestKeys).toHaveLength(1);
    const manifest = JSON.parse((await read(manifestKeys[0])).toString('utf8')) as { files: string[] };
    const uuids: string[] = [];
    const outside: string[] = [];
    for (const key of dataKeys) {
      for (const line of gunzipSync(await read(key))
        .toString('utf8')
        .split('\n')) {
        if (line === '') continue;
        const row = JSON.parse(line) as { uuid: string; timestamp: string };
        uuids.push(row.uuid);
        const at = Date.parse(row.timestamp);
        if (at < hours.s3Kill.getTime() || at >= hours.s3Kill.getTime() + HOUR) outside.push(row.uuid);
      }
    }
    // Objects the killed attempt completed that the next attempt did not write again.
    const stale = [...leftByKilled].filter(
      ([key, modified]) => objects.get(key)?.getTime() === modified.getTime(),
    );
    report(
      `s3: ${uuids.length} rows in ${dataKeys.length} objects for ${events} events; the killed worker had ` +
        `stored ${outcome.atStop.records_completed} records (attempt ${outcome.atStop.attempts}) and ` +
        `left ${leftByKilled.size} objects; completed by attempt ${outcome.final.attempts} ` +
        `${outcome.recoveryMs} ms after the kill`,
    );
    expect({
      // The manifest lists every data object under the prefix: none left over from the killed attempt.
      unlisted: dataKeys.filter((key) => !manifest.files.includes(key)),
      missingObjects: manifest.files.filter((key) => !objects.has(key)),
      repeated: repeatsOf(uuids).slice(0, 5),
      outside: outside.slice(0, 5),
      stale: stale.map(([key]) => key),
    }).toEqual({ unlisted: [], missingObjects: [], repeated: [], outside: [], stale: [] });
    expect(uuids).toHaveLength(events);
    // The killed attempt completed objects before it died, which the scenario is about.
    expect(leftByKilled.size).toBeGreaterThan(0);
    // A restarted run counts from zero: the hour's events, once.
    expect(outcome.final).toMatchObject({ records_completed: events, records_total_count: events });
    expect(outcome.final.attempts).toBeGreaterThan(outcome.atStop.attempts);
    expect(deployment.unexpectedExits()).toEqual([]);
  });

  it('SIGTERM mid-run: the worker exits 0 within 20 s, a restarted one completes the run; every event once', async () => {
    const deployment = current();
    const table = 'events_sigterm';
    const backfill = await deployment.createBackfilledExport(
      'sigterm postgres',
      { type: 'Postgres', config: deployment.postgresDestination(table) },
      hours.postgresSigterm,
    );
    let writtenBeforeResume = new Map<string, string>();
    const outcome = await interruptedRun(
      deployment,
      backfill,
      async () => {
        const since = Date.now();
        // stopApp fails the test if the worker outlives 20 s after SIGTERM.
        expect(await deployment.workers.stop()).toEqual({ code: 0, signal: null });
        report(`SIGTERM: the worker exited ${Date.now() - since} ms after the signal`);
      },
      async (run) => {
        report(`SIGTERM: the stopped worker left the run ${run.status} at ${run.records_completed} records`);
        writtenBeforeResume = new Map(
          (await destinationRows(deployment, table)).map((row) => [row.uuid, row.xmin]),
        );
      },
    );
    await expectPostgresExactlyOnce(table, hours.postgresSigterm, outcome, writtenBeforeResume);
    expect(deployment.unexpectedExits()).toEqual([]);
  });
});
