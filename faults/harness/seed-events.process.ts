// Fills whole hours with events for the batch-export scenarios and prints each hour's count as a run
// reads it (FINAL, `[start, end)`). A child process: chDB lets one process open its data path.
// Per hour: 50 events a timestamp (ties for the run's (timestamp, uuid) cursor), a redelivered copy
// of the first 1,000 rows, and 100 events on each side of both bounds. created_at is now: each event
// belongs to the interval of its timestamp, not its arrival.
// usage: node -r @swc-node/register faults/harness/seed-events.process.ts \
//          <dataPath> <database> <teamId> <hourStartMs>:<events>...
import { runChDbProcess } from './chdb-process';

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
    // A Kafka redelivery: one more row each until ClickHouse merges them.
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
