// Person processing of one 1,000-event batch over 100 persons, cold (all new) and warm, on PostgreSQL:
//   node -r @swc-node/register libs/ingestion/bench/person-processor.bench.ts \
//     postgres://hogbase_test:hogbase_test@127.0.0.1:5432/postgres
// The role must be able to create databases: a scratch one is created and dropped.
import { randomUUID } from 'node:crypto';
import type { CapturedEvent } from '@hogbase/event-contract';
import { openDataSource } from '@hogbase/postgres';
import { Client, Pool } from 'pg';
import { PersonProcessor } from '../src/persons/person-processor.service';

const PERSONS = 100;
const EVENTS_PER_PERSON = 10;
const RUNS = 7;

function event(
  teamId: number,
  distinctId: string,
  name: string,
  properties: Record<string, unknown>,
  at: number,
): CapturedEvent {
  const timestamp = new Date(at).toISOString();
  const uuid = randomUUID();
  return {
    uuid,
    distinct_id: distinctId,
    ip: null,
    data: JSON.stringify({ event: name, distinct_id: distinctId, properties, timestamp, uuid }),
    now: timestamp,
    sent_at: null,
    token: 'phc_bench',
    team_id: teamId,
    event: name,
    timestamp,
  };
}

/** Per person: pageviews, an identify merging them, `$groups`, a group identify (10 companies shared). */
function batch(teamId: number, round: number): CapturedEvent[] {
  const events: CapturedEvent[] = [];
  let at = Date.UTC(2024, 0, 1) + round * 3_600_000;
  for (let index = 0; index < PERSONS; index += 1) {
    const anon = `anon-${round}-${index}`;
    const user = `user-${index}`;
    const company = `c-${index % 10}`;
    const page = (step: number) => ({
      $current_url: `https://shop.example/p/${step}`,
      $browser: 'Firefox',
      $os: 'Linux',
      utm_source: 'newsletter',
      $set: { last_step: step, round },
    });
    events.push(event(teamId, anon, '$pageview', page(0), (at += 10)));
    events.push(event(teamId, anon, '$pageview', page(1), (at += 10)));
    events.push(
      event(
        teamId,
        user,
        '$identify',
        {
          $anon_distinct_id: anon,
          $set: { email: `${user}@example.com` },
          $set_once: { first_round: round },
        },
        (at += 10),
      ),
    );
    for (let step = 2; step < 7; step += 1)
      events.push(event(teamId, user, '$pageview', page(step), (at += 10)));
    events.push(event(teamId, user, 'order placed', { $groups: { company }, amount: index }, (at += 10)));
    events.push(
      event(
        teamId,
        user,
        '$groupidentify',
        { $group_type: 'company', $group_key: company, $group_set: { round } },
        (at += 10),
      ),
    );
  }
  if (events.length !== PERSONS * EVENTS_PER_PERSON) throw new Error(`built ${events.length} events`);
  return events;
}

const median = (values: number[]) =>
  [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const serverUrl = process.argv[2];
  if (!serverUrl) throw new Error('usage: person-processor.bench.ts <postgres server url>');
  const name = `hogbase_test_bench_${process.pid}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 2 });
  pool.on('error', () => undefined);
  try {
    const dataSource = await openDataSource({ url: url.toString() });
    await dataSource.query(
      `INSERT INTO organizations (id, name, slug) VALUES ('00000000-0000-4000-8000-000000000001', 'Bench', 'bench')`,
    );
    await dataSource.destroy();
    const processor = new PersonProcessor(pool);
    const cold: number[] = [];
    const warm: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const { rows } = await pool.query<{ id: number }>(
        `INSERT INTO teams (uuid, organization_id, name, api_token)
         VALUES ($1, '00000000-0000-4000-8000-000000000001', 'Bench', $2) RETURNING id`,
        [randomUUID(), `phc_${randomUUID()}`],
      );
      const teamId = rows[0].id;
      for (const [times, round] of [
        [cold, 0],
        [warm, 1],
      ] as const) {
        const events = batch(teamId, round);
        const started = process.hrtime.bigint();
        const outcomes = await processor.processBatch(events);
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
        const failed = outcomes.filter((outcome) => outcome.outcome !== 'ok');
        if (failed.length > 0)
          throw new Error(`${failed.length} events not processed: ${JSON.stringify(failed[0])}`);
      }
    }
    const report = (label: string, times: number[]) =>
      console.log(
        `${label}: median ${median(times).toFixed(1)} ms, min ${Math.min(...times).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms ` +
          `(${PERSONS * EVENTS_PER_PERSON} events, ${PERSONS} persons, ${RUNS} runs)`,
      );
    report('cold batch (all persons new, 100 merges)', cold);
    report('warm batch (existing persons, updates)  ', warm);
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
