// Fills whole hours with events for the batch-export fault scenarios (ClickHouse migrated by
// `admin migrate` before), then prints, as JSON on stdout, how many events each hour holds as a
// run reads it (FINAL, `[start, end)`). A child process because the embedded ClickHouse (chDB)
// lets one process at a time open its data path: the workers open it after this exits.
//
// Each hour gets its number of events (generated in ClickHouse, random uuids, 50 to a timestamp so
// that the run's (timestamp, uuid) cursor has ties to break), a redelivered copy of its first 1,000
// rows (what a Kafka redelivery leaves until a merge), and 100 events on each side of both bounds.
// Their created_at (capture's receipt) is now, before the export exists: each belongs to the
// interval of its timestamp, not to the one it arrived in.
//
// usage: node -r @swc-node/register faults/harness/seed-events.process.ts \
//          <dataPath> <database> <teamId> <hourStartMs>:<events>...
import { runChDbProcess } from './chdb-process';

/** Events on each side of each bound of an hour: the first and last microsecond in, the next ones out. */
const AT_BOUNDS = 100;
const REDELIVERED = 1_000;

runChDbProcess(async ({ client, table, teamId, args: hours }) => {
  const insert = async (count: number, timestampSql: string, params: Record<string, unknown>) => {
    await client.command({
      query: `INSERT INTO ${table} (uuid, event, properties, timestamp, team_id, distinct_id, created_at, person_id)
                SELECT generateUUIDv4(number), if(number % 3 = 0, '$pageview', 'clicked'),
                       concat('{"$browser":"Firefox","$current_url":"https://example.com/pricing","n":', toString(number), '}'),
                       ${timestampSql}, {teamId:Int64}, concat('user-', toString(number % 1000)),
                       now64(6, 'UTC'), generateUUIDv4(number + 1)
                  FROM numbers({count:UInt64})`,
      query_params: { ...params, teamId, count },
    });
  };
  const counts: Record<string, number> = {};
  for (const hour of hours) {
    const [hourStartMs, perHour] = hour.split(':').map(Number);
    const start = hourStartMs / 1_000;
    const end = start + 3_600;
    // 50 events a timestamp, spread over the hour (200,000 events: 900 ms apart).
    const step = Math.floor((3_600_000 / Math.ceil(perHour / 50)) * 1_000);
    await insert(
      perHour,
      `toDateTime64({start:Int64}, 6, 'UTC') + toIntervalMicrosecond(intDiv(number, 50) * {step:Int64})`,
      { start, step },
    );
    for (const [at, offsetMicros] of [
      [start, -1],
      [start, 0],
      [end, -1],
      [end, 0],
    ]) {
      await insert(AT_BOUNDS, `toDateTime64({at:Int64}, 6, 'UTC') + toIntervalMicrosecond({offset:Int64})`, {
        at,
        offset: offsetMicros,
      });
    }
    // A Kafka redelivery: the same events again, one more row each until ClickHouse merges them.
    await client.command({
      query: `INSERT INTO ${table} SELECT * FROM ${table}
                 WHERE team_id = {teamId:Int64} AND timestamp >= toDateTime64({start:Int64}, 6, 'UTC')
                   AND timestamp < toDateTime64({end:Int64}, 6, 'UTC')
                 ORDER BY timestamp, uuid LIMIT {limit:UInt64}`,
      query_params: { teamId, start, end, limit: REDELIVERED },
    });
    const result = await client.query({
      query: `SELECT count() AS events FROM ${table} FINAL
                 WHERE team_id = {teamId:Int64} AND timestamp >= toDateTime64({start:Int64}, 6, 'UTC')
                   AND timestamp < toDateTime64({end:Int64}, 6, 'UTC')`,
      query_params: { teamId, start, end },
      format: 'JSONEachRow',
    });
    const [{ events }] = await result.json<{ events: string }>();
    counts[String(hourStartMs)] = Number(events);
  }
  return counts;
});
