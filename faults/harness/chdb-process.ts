import { closeClickHouse, createClickHouse, EVENTS_TABLE, type ClickHouseClient } from '@hogbase/clickhouse';

export interface ChDbProcessContext {
  client: ClickHouseClient;
  /** `<database>.events`. */
  table: string;
  teamId: string;
  args: string[];
}

/**
 * A harness child process that opens chDB (one process at a time may): argv `<dataPath> <database>
 * <teamId> ...args`; prints what `work` returns as JSON and exits 0, or 1 with the error on stderr.
 */
export function runChDbProcess(work: (context: ChDbProcessContext) => Promise<unknown>): void {
  const main = async (): Promise<void> => {
    const [dataPath, database, teamId, ...args] = process.argv.slice(2);
    const client = createClickHouse({ dataPath, database });
    try {
      const result = await work({ client, table: `${database}.${EVENTS_TABLE}`, teamId, args });
      // Written in full before the exit below: stdout to a pipe is asynchronous.
      await new Promise((resolve) => process.stdout.write(JSON.stringify(result), resolve));
    } finally {
      await closeClickHouse(client);
    }
  };
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
