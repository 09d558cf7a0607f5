// One step of the exports benchmark in a process of its own, so its peak RSS is that path's alone
// (chDB binds its data directory to one process). Env: BENCH_EXPORT_REQUEST (an ExportStepRequest as
// JSON) and the workers' settings. IPC: sends one ExportStepResult, then exits.
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pino from 'pino';
import { createBatchExportDestinations } from '@hogbase/batch-exports';
import { assertDatabaseName, closeClickHouse, createClickHouse } from '@hogbase/clickhouse';
import {
  ConfigError,
  loadClickHouseConfig,
  loadWorkersConfig,
  openSecretBox,
  runMain,
} from '@hogbase/config';
import { EgressPolicy } from '@hogbase/egress';
import { prepareEventStores } from '@hogbase/ingestion';
import { clickhouseTime, createWorkersPool, executeRun, RunStore } from '@hogbase/workers';

export type ExportStepRequest =
  | { step: 'load'; teamId: number; events: number; hourStart: string }
  /** The baseline: the hour's rows into /dev/null. */
  | { step: 'select'; teamId: number; hourStart: string; hourEnd: string }
  | { step: 'export'; runId: string };

export type ExportStepResult =
  | { type: 'loaded'; rows: number; seconds: number }
  | {
      type: 'measured';
      rows: number;
      /** To /dev/null, or what the destination reported (compressed). */
      bytes: number;
      seconds: number;
      rssBeforeBytes: number;
      peakRssBytes: number;
    };

const LOAD_CHUNK = 250_000;

/**
 * Resets VmHWM to the current RSS, so start-up does not count; false where /proc does not allow it.
 * Not resourceUsage().maxRSS: clear_refs does not reset it, and a spawn can inherit the parent's.
 */
function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

function peakRssBytes(resetWorked: boolean): number {
  const match = resetWorked ? /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8')) : null;
  return (match ? Number(match[1]) : process.resourceUsage().maxRSS) * 1024;
}
const HOUR_MICROSECONDS = 3_600_000_000;

/** Ids shared by rows, as sessions and persons are. */
function uuidFrom(seed: string): string {
  const half = (salt: number) => `toFixedString(reinterpretAsString(cityHash64(${seed}, ${salt})), 8)`;
  return `reinterpretAsUUID(concat(${half(1)}, ${half(2)}))`;
}

/** Events as the JS SDK sends them from a shop's pages (bench/README.md describes the rows). */
function insertQuery(database: string): string {
  return `INSERT INTO ${assertDatabaseName(database)}.events
      (uuid, event, properties, timestamp, team_id, distinct_id, elements_chain, created_at,
       person_id, person_properties, person_created_at)
    SELECT generateUUIDv4(n), event,
           concat('{"$browser":"', browser, '","$browser_version":', toString(120 + person % 6),
                  ',"$os":"', os, '","$device_type":"', if(os IN ('iOS', 'Android'), 'Mobile', 'Desktop'),
                  '","$current_url":"https://shop.example.com', path, '","$host":"shop.example.com","$pathname":"', path,
                  '","$referrer":"', referrer, '","$referring_domain":"', domain(referrer),
                  '","$screen_height":1080,"$screen_width":1920,"$viewport_height":', toString(700 + n % 300),
                  ',"$viewport_width":1440,"$lib":"web","$lib_version":"1.160.0","$session_id":"', toString(${uuidFrom('session')}),
                  '","$window_id":"', toString(${uuidFrom("session, 'window'")}),
                  '","$device_id":"', toString(${uuidFrom("person, 'device'")}),
                  '","$insert_id":"', toString(${uuidFrom("n, 'insert'")}),
                  '","utm_source":"', ['newsletter', 'google', 'twitter', ''][person % 4 + 1],
                  '","utm_campaign":"spring-sale","$is_identified":', if(person % 3 = 0, 'true', 'false'),
                  if(event = 'purchase', concat(',"price":', toString(5 + n % 200), ',"currency":"EUR"'), ''),
                  '}'),
           ts, {team:Int64}, concat('user-', toString(person)),
           if(event = '$autocapture', concat('button.btn.btn-primary:attr__class="btn btn-primary"nth-child="2"nth-of-type="1"text="Add to cart";div.product:nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"'), ''),
           ts + toIntervalMillisecond(cityHash64(n, 'received') % 2000),
           ${uuidFrom("person, 'person'")},
           concat('{"email":"user-', toString(person), '@example.com","plan":"', ['free', 'pro', 'team'][person % 3 + 1],
                  '","$initial_browser":"', browser, '"}'),
           ts - toIntervalDay(person % 300)
      FROM (SELECT number AS n,
                   number % 50000 AS person,
                   intDiv(number, 20) AS session,
                   toDateTime64({hour_start:UInt64}, 6, 'UTC') + toIntervalMicrosecond(cityHash64(number, 'ts') % ${HOUR_MICROSECONDS}) AS ts,
                   ['$pageview', '$pageview', '$pageview', '$pageleave', '$autocapture', '$autocapture', 'purchase', 'signup'][number % 8 + 1] AS event,
                   ['Chrome', 'Chrome', 'Safari', 'Firefox', 'Edge'][cityHash64(number % 50000, 'browser') % 5 + 1] AS browser,
                   ['Mac OS X', 'Windows', 'iOS', 'Android', 'Linux'][cityHash64(number % 50000, 'os') % 5 + 1] AS os,
                   concat('/products/', toString(cityHash64(number, 'path') % 2000), '?ref=home') AS path,
                   ['https://www.google.com/', 'https://news.example.org/spring', '$direct'][number % 3 + 1] AS referrer
              FROM numbers({from:UInt64}, {count:UInt64}))`;
}

async function load(request: Extract<ExportStepRequest, { step: 'load' }>): Promise<ExportStepResult> {
  const config = loadClickHouseConfig(process.env);
  const clickhouse = createClickHouse(config);
  try {
    const startedAt = performance.now();
    await prepareEventStores({ clickhouse: { client: clickhouse, database: config.database } });
    for (let from = 0; from < request.events; from += LOAD_CHUNK) {
      await clickhouse.command({
        query: insertQuery(config.database),
        query_params: {
          team: request.teamId,
          hour_start: Math.floor(Date.parse(request.hourStart) / 1000),
          from,
          count: Math.min(LOAD_CHUNK, request.events - from),
        },
      });
    }
    // One part, as an hour-old hour mostly is: background merges would run inside a measured path.
    await clickhouse.command({ query: `OPTIMIZE TABLE ${assertDatabaseName(config.database)}.events FINAL` });
    const result = await clickhouse.query({
      query: `SELECT count() AS rows FROM ${assertDatabaseName(config.database)}.events FINAL WHERE team_id = {team:Int64}`,
      query_params: { team: request.teamId },
      format: 'JSONEachRow',
    });
    const [{ rows }] = await result.json<{ rows: string }>();
    return { type: 'loaded', rows: Number(rows), seconds: (performance.now() - startedAt) / 1000 };
  } finally {
    await closeClickHouse(clickhouse);
  }
}

/**
 * The baseline and the export open the same engines (what executeRun runs on, from the workers'
 * config), so both start from the same RSS. Not openWorkersEngines: ingestion's progress is no part of a run.
 */
async function measure(request: Exclude<ExportStepRequest, { step: 'load' }>): Promise<ExportStepResult> {
  const config = loadWorkersConfig(process.env);
  const logger = pino({ level: 'warn' });
  const databaseUrl = config.database.url;
  if (!databaseUrl) throw new ConfigError('DATABASE_URL', '', 'is required');
  const pool = createWorkersPool(databaseUrl, config.database.poolSize, logger);
  const clickhouse = createClickHouse(config.clickhouse);
  const engines = {
    pool,
    clickhouse,
    secrets: await openSecretBox(config.encryptionKeys, config.dataDir),
    destinations: createBatchExportDestinations({
      egress: new EgressPolicy(config.egress),
      s3ServerCredentials: config.batchExportS3ServerCredentials,
    }),
    logger,
  };
  try {
    // The engine's first query starts it: not part of either path.
    await (await clickhouse.query({ query: 'SELECT 1', format: 'JSONEachRow' })).json();
    const reset = resetPeakRss();
    const rssBeforeBytes = process.memoryUsage().rss;
    const startedAt = performance.now();
    let rows: number;
    let bytes = 0;
    if (request.step === 'select') {
      const database = assertDatabaseName(config.clickhouse.database);
      // The run's own selection and default fields: what the export adds is chunking, its JSON, gzip and S3.
      const { stream } = await clickhouse.exec({
        query: `SELECT toString(uuid) AS uuid, timestamp, _timestamp AS _inserted_at, created_at, event, properties,
                       distinct_id, elements_chain, person_properties, toString(person_id) AS person_id
                  FROM ${database}.events AS events FINAL
                 WHERE team_id = {team:Int64}
                   AND timestamp >= {start:DateTime64(6, 'UTC')} AND timestamp < {end:DateTime64(6, 'UTC')}
                 ORDER BY timestamp, uuid
                FORMAT JSONEachRow`,
        query_params: {
          team: request.teamId,
          start: clickhouseTime(new Date(request.hourStart)),
          end: clickhouseTime(new Date(request.hourEnd)),
        },
      });
      let lines = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          bytes += chunk.length;
          for (let index = chunk.indexOf(0x0a); index !== -1; index = chunk.indexOf(0x0a, index + 1)) {
            lines += 1;
          }
          done(null, chunk);
        },
      });
      await pipeline(stream, counter, createWriteStream('/dev/null'));
      rows = lines;
    } else {
      // A variable, so a field the deps gain later does not break this call's type check.
      const deps = {
        ...engines,
        store: new RunStore(pool),
        database: config.clickhouse.database,
        lagSeconds: config.exportLagSeconds,
        queryLimits: config.batchExportQueryLimits,
      };
      const outcome = await executeRun(request.runId, deps, new AbortController().signal);
      if (outcome.status !== 'Completed') {
        throw new Error(`the export run ended ${outcome.status}: ${JSON.stringify(outcome)}`);
      }
      rows = outcome.records;
      bytes = outcome.bytes;
    }
    const seconds = (performance.now() - startedAt) / 1000;
    return {
      type: 'measured',
      rows,
      bytes,
      seconds,
      rssBeforeBytes,
      peakRssBytes: peakRssBytes(reset),
    };
  } finally {
    await closeClickHouse(clickhouse);
    await pool.end();
  }
}

async function main(): Promise<void> {
  const raw = process.env.BENCH_EXPORT_REQUEST;
  if (!raw) throw new ConfigError('BENCH_EXPORT_REQUEST', '', 'is required');
  process.once('disconnect', () => process.exit(1));
  const request = JSON.parse(raw) as ExportStepRequest;
  const result = request.step === 'load' ? await load(request) : await measure(request);
  await new Promise<void>((resolve, reject) =>
    process.send?.(result, (error: Error | null) => (error ? reject(error) : resolve())),
  );
  process.exit(0);
}

runMain(main);
