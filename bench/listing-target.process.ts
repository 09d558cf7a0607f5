// The management app for the listing benchmark, reading a chDB directory of its own.
// Env: DATABASE_URL, BENCH_LISTING_DATA_PATH. IPC: sends {type: 'listening', port, key}; on
// {type: 'generate', total, load} makes a project as bench/README.md (5) says and answers
// {type: 'generated', projectId, total, seconds, parts} (`parts`: active parts, which FINAL merges).
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { closeClickHouse, createClickHouse, migrateClickHouse } from '@hogbase/clickhouse';
import { ConfigError, loadManagementConfig, runMain } from '@hogbase/config';
import { BootstrapService, createManagementApp } from '@hogbase/management-api';
import type { ListingLoad } from './bench.config';

export const LISTING_DATABASE = 'hogbase_bench_listing';
/** A year, so every window of the listing matters. */
const SPAN_SECONDS = 365 * 86_400;
const DAY_SECONDS = 86_400;
const INSERT_CHUNK = 1_000_000;
/** What ingestion's shared inserts hold. */
const INGESTION_INSERT_ROWS = 1_500;

export type ListingTargetMessage =
  | { type: 'listening'; port: number; key: string }
  | { type: 'generated'; projectId: number; total: number; seconds: number; parts: number };

export interface GenerateRequest {
  type: 'generate';
  total: number;
  load: ListingLoad;
}

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  const dataPath = process.env.BENCH_LISTING_DATA_PATH;
  if (!databaseUrl) throw new ConfigError('DATABASE_URL', '', 'is required');
  if (!dataPath) throw new ConfigError('BENCH_LISTING_DATA_PATH', '', 'is required');

  const clickhouse = createClickHouse({ database: LISTING_DATABASE, dataPath });
  await migrateClickHouse(clickhouse, { database: LISTING_DATABASE });
  const config = { ...loadManagementConfig({ LOG_LEVEL: 'warn' }), port: 0 };
  const app = await createManagementApp({
    config,
    databaseUrl,
    clickhouse: { database: LISTING_DATABASE, dataPath },
    logger: pino({ level: 'warn' }),
  });
  await app.listen(0, '127.0.0.1');
  const bootstrap = app.get(BootstrapService);
  const owner = { email: 'listing-bench@example.com', organizationName: 'Listing bench' };
  const credentials = await bootstrap.bootstrap(owner);
  const newestMicros = BigInt(Date.now()) * 1_000n;

  /** Uniformly over the `seconds` before `end`, plus a ninth as many of another project mixed in. */
  async function insertSlice(teamId: number, count: number, end: number, seconds: number): Promise<void> {
    await clickhouse.command({
      query: `INSERT INTO ${LISTING_DATABASE}.events
                (uuid, event, properties, timestamp, team_id, distinct_id, created_at, person_id)
              SELECT generateUUIDv4(),
                     ['$pageview', 'purchase', 'signup', '$autocapture'][number % 4 + 1],
                     concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari'][number % 3 + 1],
                            '","price":', toString(number % 1000),
                            ',"$current_url":"https://example.com/p/', toString(number % 500), '"}'),
                     fromUnixTimestamp64Micro({end:Int64}, 'UTC') - toIntervalMicrosecond(
                       cityHash64(number, {end:Int64}) % {span:UInt64}),
                     if(number % 10 = 9, {other:Int64}, {team:Int64}),
                     concat('user-', toString(number % 10000)), now64(6), generateUUIDv4()
              FROM numbers({count:UInt64})`,
      query_params: {
        end: (newestMicros - BigInt(Math.round(end * 1e6))).toString(),
        span: Math.max(1, Math.round(seconds * 1e6)),
        other: teamId + 1_000_000,
        team: teamId,
        count: Math.round((count * 10) / 9),
      },
    });
  }

  async function generate(total: number, load: ListingLoad): Promise<void> {
    const project = await bootstrap.bootstrap({ ...owner, projectName: `${total} events, ${load}` });
    const teamId = project.project_id;
    const startedAt = performance.now();
    if (load === 'scattered') {
      for (let done = 0; done < total; done += INSERT_CHUNK) {
        await insertSlice(teamId, Math.min(INSERT_CHUNK, total - done), 0, SPAN_SECONDS);
      }
    } else {
      // Oldest first; the newest day as ingestion writes it, in many small inserts.
      const newestDay = Math.round((total * DAY_SECONDS) / SPAN_SECONDS);
      const slices = [
        { events: total - newestDay, seconds: SPAN_SECONDS - DAY_SECONDS, rows: INSERT_CHUNK },
        { events: newestDay, seconds: DAY_SECONDS, rows: INGESTION_INSERT_ROWS },
      ];
      let end = SPAN_SECONDS;
      for (const slice of slices) {
        for (let done = 0; done < slice.events; done += slice.rows) {
          const count = Math.min(slice.rows, slice.events - done);
          const seconds = (count / slice.events) * slice.seconds;
          end -= seconds;
          await insertSlice(teamId, count, end, seconds);
        }
      }
    }
    const seconds = (performance.now() - startedAt) / 1000;
    const result = await clickhouse.query({
      query: `SELECT count() AS parts FROM system.parts
              WHERE database = {database:String} AND table = 'events' AND active`,
      query_params: { database: LISTING_DATABASE },
      format: 'JSONEachRow',
    });
    const [{ parts }] = await result.json<{ parts: string }>();
    const reply: ListingTargetMessage = {
      type: 'generated',
      projectId: teamId,
      total,
      seconds,
      parts: Number(parts),
    };
    process.send?.(reply);
  }

  process.on('message', (message: GenerateRequest) => {
    if (message.type === 'generate') {
      generate(message.total, message.load).catch((error: unknown) => {
        console.error(error);
        process.exit(1);
      });
    }
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    Promise.all([app.close(), closeClickHouse(clickhouse)]).then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
  const address = app.getHttpServer().address() as { port: number };
  const listening: ListingTargetMessage = {
    type: 'listening',
    port: address.port,
    key: credentials.personal_api_key,
  };
  process.send?.(listening);
}

runMain(main);
