// Prints what the events table lists for a project, as JSON on stdout: the uuids as the listing
// reads them (FINAL: one row per event, as the API lists it) and the raw row count (redelivered
// batches are extra rows until ClickHouse merges them). A child process because the embedded
// ClickHouse (chDB) lets one process at a time open its data path.
//
// usage: node -r @swc-node/register faults/harness/listed-events.process.ts <dataPath> <database> <teamId>
import { closeClickHouse, createClickHouse, EVENTS_TABLE } from '@hogbase/clickhouse';

async function main(): Promise<void> {
  const [dataPath, database, teamId] = process.argv.slice(2);
  const client = createClickHouse({ dataPath, database });
  try {
    const table = `${database}.${EVENTS_TABLE}`;
    const listed = await client.query({
      query: `SELECT toString(uuid) AS uuid FROM ${table} FINAL WHERE team_id = {teamId:Int64}`,
      query_params: { teamId },
      format: 'JSONEachRow',
    });
    const uuids = (await listed.json<{ uuid: string }>()).map((row) => row.uuid);
    const raw = await client.query({
      query: `SELECT count() AS rows FROM ${table} WHERE team_id = {teamId:Int64}`,
      query_params: { teamId },
      format: 'JSONEachRow',
    });
    const [{ rows }] = await raw.json<{ rows: string }>();
    // Written in full before the exit below: stdout to a pipe is asynchronous.
    await new Promise((resolve) =>
      process.stdout.write(JSON.stringify({ uuids, rawRows: Number(rows) }), resolve),
    );
  } finally {
    await closeClickHouse(client);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
