// Prints the project's listed uuids (FINAL, as the API lists them) and the raw row count (redelivered
// batches are extra rows until a merge). A child process: chDB lets one process open its data path.
// usage: node -r @swc-node/register faults/harness/listed-events.process.ts <dataPath> <database> <teamId>
import { runChDbProcess } from './chdb-process';

runChDbProcess(async ({ client, table, teamId }) => {
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
  return { uuids, rawRows: Number(rows) };
});
