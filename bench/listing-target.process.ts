// A child process serving the management app for the event-listing benchmark, on 127.0.0.1 and a
// free port, reading events from a chDB data directory of its own. Started by listing.bench.ts.
//
// Env: DATABASE_URL (the bench database, migrated), BENCH_LISTING_DATA_PATH (chDB directory).
// IPC: sends {type: 'listening', port, key, projectId}; on {type: 'generate', total} it inserts
// events into the project (and a tenth as many into another project) until the project holds
// `total`, then answers {type: 'generated', total, seconds, parts}: `parts` is how many active
// parts the events table has then (the background merges have not caught up with the inserts,
// and FINAL merges what overlaps).
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { closeClickHouse, createClickHouse, migrateClickHouse } from '@hogbase/clickhouse';
import { ConfigError, loadManagementConfig, runMain } from '@hogbase/config';
import { BootstrapService, createManagementApp } from '@hogbase/management-api';

export const LISTING_DATABASE = 'hogbase_bench_listing';
/** Events a generated project spans, newest at start-up: a year, so every window of the listing matters. */
const SPAN_SECONDS = 365 * 86_400;
const INSERT_CHUNK = 1_000_000;

export type ListingTargetMessage =
  | { type: 'listening'; port: number; key: string; projectId: number }
  | { type: 'generated'; total: number; seconds: number; parts: number };

export interface GenerateRequest {
  type: 'generate';
  total: number;
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
  const credentials = await app
    .get(BootstrapService)
    .bootstrap({ email: 'listing-bench@example.com', organizationName: 'Listing bench' });
  const projectId = credentials.project_id;
  const newest = Math.floor(Date.now() / 1000);
  let generated = 0;

  /**
   * Events at uniformly spread times over the year before start-up (each size is a year of
   * events), plus a tenth as many in another project.
   */
  async function generate(total: number): Promise<void> {
    const startedAt = performance.now();
    while (generated < total) {
      const count = Math.min(INSERT_CHUNK, total - generated);
      await clickhouse.command({
        query: `INSERT INTO ${LISTING_DATABASE}.events
                  (uuid, event, properties, timestamp, team_id, distinct_id, created_at, person_id)
                SELECT generateUUIDv4(),
                       ['$pageview', 'purchase', 'signup', '$autocapture'][number % 4 + 1],
                       concat('{"$browser":"', ['Chrome', 'Firefox', 'Safari'][number % 3 + 1],
                              '","price":', toString(number % 1000),
                              ',"$current_url":"https://example.com/p/', toString(number % 500), '"}'),
                       toDateTime64({newest:UInt64}, 6, 'UTC') - toIntervalMicrosecond(
                         cityHash64(number) % ({span:UInt64} * 1000000)),
                       if(number % 10 = 9, {other:Int64}, {team:Int64}),
                       concat('user-', toString(number % 10000)), now64(6), generateUUIDv4()
                FROM numbers({from:UInt64}, {count:UInt64})`,
        query_params: {
          newest,
          span: SPAN_SECONDS,
          other: projectId + 1_000_000,
          team: projectId,
          from: Math.round((generated * 10) / 9),
          count: Math.round((count * 10) / 9),
        },
      });
      generated += count;
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
      total: generated,
      seconds,
      parts: Number(parts),
    };
    process.send?.(reply);
  }

  process.on('message', (message: GenerateRequest) => {
    if (message.type === 'generate') {
      generate(message.total).catch((error: unknown) => {
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
    projectId,
  };
  process.send?.(listening);
}

runMain(main);
