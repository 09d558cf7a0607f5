import { renderClickHouseMigration } from './migration-runner.util';

const SQL = `-- a comment; with a semicolon
CREATE TABLE IF NOT EXISTS {database}.events_local {on_cluster}
(uuid UUID)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/events', '{replica}');

CREATE TABLE IF NOT EXISTS {database}.events {on_cluster} AS {database}.events_local
ENGINE = Distributed('{cluster_name}', '{database}', 'events_local', cityHash64(uuid));
`;

describe('renderClickHouseMigration', () => {
  it('fills in the database and the cluster and splits the statements', () => {
    expect(renderClickHouseMigration(SQL, { database: 'hogbase', cluster: 'posthog' })).toEqual([
      "CREATE TABLE IF NOT EXISTS hogbase.events_local ON CLUSTER 'posthog'\n(uuid UUID)\n" +
        "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/hogbase/events', '{replica}')",
      "CREATE TABLE IF NOT EXISTS hogbase.events ON CLUSTER 'posthog' AS hogbase.events_local\n" +
        "ENGINE = Distributed('posthog', 'hogbase', 'events_local', cityHash64(uuid))",
    ]);
  });

  it('leaves the ON CLUSTER clause out on a single node', () => {
    const [statement] = renderClickHouseMigration('CREATE DATABASE IF NOT EXISTS {database} {on_cluster};', {
      database: 'hogbase',
    });
    expect(statement).toBe('CREATE DATABASE IF NOT EXISTS hogbase');
  });

  it('refuses a cluster name placeholder when no cluster is set', () => {
    expect(() => renderClickHouseMigration(SQL, { database: 'hogbase' })).toThrow(/\{cluster_name\}/);
  });

  it('refuses database and cluster names that would need quoting', () => {
    expect(() => renderClickHouseMigration(SQL, { database: 'hogbase; DROP DATABASE x' })).toThrow(
      /Invalid ClickHouse database name/,
    );
    expect(() => renderClickHouseMigration(SQL, { database: 'hogbase', cluster: "a' b" })).toThrow(
      /Invalid ClickHouse cluster name/,
    );
  });

  it('keeps a semicolon that does not end a line inside its statement', () => {
    expect(
      renderClickHouseMigration("ALTER TABLE {database}.t COMMENT COLUMN c 'a;b';\nSELECT 1;", {
        database: 'd',
      }),
    ).toEqual(["ALTER TABLE d.t COMMENT COLUMN c 'a;b'", 'SELECT 1']);
  });
});
