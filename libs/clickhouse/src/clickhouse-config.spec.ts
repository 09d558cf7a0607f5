// NOTE: tests libs/config's ClickHouse section; it lives here while libs/config is edited by others.
import path from 'node:path';
import { ConfigError, describeClickHouse, loadClickHouseConfig } from '@hogbase/config';
import { isValidClusterName, isValidDatabaseName } from './sql-identifier.util';

describe('loadClickHouseConfig', () => {
  it('defaults to the embedded engine under the data directory, database hogbase', () => {
    expect(loadClickHouseConfig({ DATA_DIR: '/var/lib/hogbase' })).toEqual({
      url: undefined,
      username: undefined,
      password: undefined,
      database: 'hogbase',
      cluster: undefined,
      dataPath: '/var/lib/hogbase/clickhouse',
    });
    expect(loadClickHouseConfig({}).dataPath).toBe(path.resolve('.data/clickhouse'));
  });

  it('reads a server, its credentials, database and cluster', () => {
    const config = loadClickHouseConfig({
      CLICKHOUSE_URL: 'https://clickhouse.internal:8443',
      CLICKHOUSE_USER: 'ingestion',
      CLICKHOUSE_PASSWORD: 's3cret',
      CLICKHOUSE_DATABASE: 'analytics',
      CLICKHOUSE_CLUSTER: 'posthog-main',
    });
    expect(config).toMatchObject({
      url: 'https://clickhouse.internal:8443/',
      username: 'ingestion',
      password: 's3cret',
      database: 'analytics',
      cluster: 'posthog-main',
    });
    expect(describeClickHouse(config)).toBe(
      'https://clickhouse.internal:8443/, database analytics on cluster posthog-main',
    );
  });

  it('takes an explicit chDB data path', () => {
    expect(loadClickHouseConfig({ CLICKHOUSE_DATA_PATH: '/srv/chdb' }).dataPath).toBe('/srv/chdb');
  });

  it('hides the password of a URL in its description', () => {
    const config = loadClickHouseConfig({ CLICKHOUSE_URL: 'http://default:hunter2@localhost:8123' });
    expect(describeClickHouse(config)).not.toContain('hunter2');
  });

  it.each([
    [
      { CLICKHOUSE_URL: 'tcp://localhost:9000' },
      'CLICKHOUSE_URL=tcp://localhost:9000: must use one of the protocols',
    ],
    [{ CLICKHOUSE_URL: 'not a url' }, 'CLICKHOUSE_URL=not a url: is not a valid URL'],
    [{ CLICKHOUSE_DATABASE: 'hog-base' }, 'CLICKHOUSE_DATABASE=hog-base: must be letters'],
    [{ CLICKHOUSE_DATABASE: '1hogbase' }, 'CLICKHOUSE_DATABASE=1hogbase: must be letters'],
    [
      { CLICKHOUSE_URL: 'http://localhost:8123', CLICKHOUSE_CLUSTER: "a'b" },
      "CLICKHOUSE_CLUSTER=a'b: must be letters",
    ],
    [{ CLICKHOUSE_CLUSTER: 'main' }, 'CLICKHOUSE_CLUSTER=main: needs CLICKHOUSE_URL'],
  ])('stops on %j', (env, message) => {
    expect(() => loadClickHouseConfig(env)).toThrow(ConfigError);
    expect(() => loadClickHouseConfig(env)).toThrow(message);
  });

  it('accepts exactly the names the ClickHouse lib accepts', () => {
    for (const name of ['hogbase', '_x', 'a1', 'hog-base', '1a', 'a b', '']) {
      const valid = (() => {
        try {
          loadClickHouseConfig({ CLICKHOUSE_DATABASE: name || 'hogbase' });
          return true;
        } catch {
          return false;
        }
      })();
      expect(valid).toBe(isValidDatabaseName(name || 'hogbase'));
    }
    for (const name of ['main', 'posthog-main', 'a.b', "a'b", '-x']) {
      const valid = (() => {
        try {
          loadClickHouseConfig({ CLICKHOUSE_URL: 'http://localhost:8123', CLICKHOUSE_CLUSTER: name });
          return true;
        } catch {
          return false;
        }
      })();
      expect(valid).toBe(isValidClusterName(name));
    }
  });
});
