import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import pino from 'pino';
import { loadClickHouseMigrations } from '@hogbase/clickhouse';
import { loadManagementConfig } from '@hogbase/config';
import { DEAD_LETTER_TOPIC, EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC } from '@hogbase/event-contract';
import { createManagementApp } from '@hogbase/management-api';
import { MIGRATIONS } from '@hogbase/postgres';
import { createKafkaClient } from '@hogbase/queue';
import {
  createTestDatabase,
  runProcess,
  type TestDatabase,
  UUID_PATTERN as UUID,
} from '@hogbase/test-support';
import { apiClient, type ApiClient } from './management-test-app';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const CLI = 'apps/management/src/cli/admin.cli.ts';
const CLI_TIMEOUT_MS = 90_000;
const CONTRACT_FIELDS = ['email', 'organization_id', 'personal_api_key', 'project_api_key', 'project_id'];
const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);

/**
 * Opens the embedded ClickHouse (chDB) on `<argv[1]>` in a process of its own, prints the TSV answer
 * to the query `<argv[2]>`, and with `hold` keeps the data path until its stdin closes.
 * NOTE: chDB binds one data path per process, and this Jest worker's may already be bound elsewhere.
 */
const CHDB_SCRIPT = `
const { Session } = require('chdb');
const session = new Session(process.argv[1]);
process.stdout.write(session.query(process.argv[2], 'TSV'));
if (process.argv[3] === 'hold') process.stdin.resume().on('end', () => session.close());
else session.close();
`;

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The admin CLI as a platform team runs it: a separate process on the pinned Node (node_modules/.bin
 * first on PATH), TypeScript loaded by @swc-node/register, the database from DATABASE_URL.
 * `viaNpm` runs it as `npm run admin -- <args>` instead of calling node directly.
 */
function runCli(args: string[], env: Record<string, string>, { viaNpm = false } = {}): Promise<CliResult> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.join(REPO_ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    ...env,
  };
  // Jest's own flags (e.g. --experimental-vm-modules) are not what `npm run admin` runs with.
  delete childEnv.NODE_OPTIONS;
  const [command, commandArgs] = viaNpm
    ? ['npm', ['run', 'admin', '--', ...args]]
    : ['node', ['-r', '@swc-node/register', CLI, ...args]];
  return runProcess(command, commandArgs, {
    cwd: REPO_ROOT,
    env: childEnv,
    timeoutMs: CLI_TIMEOUT_MS - 5_000,
  });
}

/** Parses stdout that must be exactly one JSON line and nothing else. */
function singleJsonLine(result: CliResult): Record<string, unknown> {
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
  expect(result.stdout.endsWith('\n')).toBe(true);
  const lines = result.stdout.split('\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toBe('');
  return JSON.parse(lines[0]) as Record<string, unknown>;
}

function expectFailure(result: CliResult, message: string | RegExp): void {
  expect(result.code).not.toBe(0);
  expect(result.code).not.toBeNull();
  expect(result.stdout).toBe('');
  expect(result.stderr).toEqual(
    typeof message === 'string' ? expect.stringContaining(message) : expect.stringMatching(message),
  );
}

/** The management app on the CLI's database (the shared harness always makes a database of its own). */
async function startAppOnDatabase(databaseUrl: string): Promise<{ app: INestApplication; baseUrl: string }> {
  const config = loadManagementConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/tmp/hogbase-test-unused' });
  const app = await createManagementApp({ config, databaseUrl, logger: pino({ level: 'silent' }) });
  await app.listen(0, '127.0.0.1');
  return { app, baseUrl: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

describe('admin CLI (npm run admin)', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let app: INestApplication | undefined;
  let baseUrl: string;
  /** The first bootstrap's output, shared by the tests that need an admin. */
  let first: Record<string, unknown>;

  const cli = (...args: string[]) => runCli(args, env);
  const client = (key: unknown): ApiClient => apiClient(baseUrl, `Bearer ${String(key)}`);

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(tmpdir(), 'hogbase-admin-cli-test-'));
    env = { DATABASE_URL: database.url, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
    // The CLI runs first on the empty database, so it applies the migrations itself.
    first = singleJsonLine(await cli('bootstrap', '--email', 'platform@cli.test'));
    ({ app, baseUrl } = await startAppOnDatabase(database.url));
  }, CLI_TIMEOUT_MS * 2);

  afterAll(async () => {
    await app?.close();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  describe('bootstrap', () => {
    it('prints exactly one JSON line with the five contract fields, correctly typed', () => {
      expect(Object.keys(first).sort()).toEqual(CONTRACT_FIELDS);
      expect(first.email).toBe('platform@cli.test');
      expect(first.personal_api_key).toEqual(expect.stringMatching(/^phx_[A-Za-z0-9]{20,}$/));
      expect(first.organization_id).toEqual(expect.stringMatching(UUID));
      expect(Number.isInteger(first.project_id)).toBe(true);
      expect(first.project_api_key).toEqual(expect.stringMatching(/^phc_[A-Za-z0-9]{20,}$/));
    });

    it('prints a key that lists the organization and a project whose api_token is the project API key', async () => {
      const api = client(first.personal_api_key);

      const organizations = await api.get('/api/organizations/');
      const project = await api.get(`/api/projects/${String(first.project_id)}/`);

      expect(organizations.status).toBe(200);
      expect(organizations.body.results.map((organization: { id: string }) => organization.id)).toEqual([
        first.organization_id,
      ]);
      expect(organizations.body.results[0].membership_level).toBe(15);
      expect(project.status).toBe(200);
      expect(project.body.api_token).toBe(first.project_api_key);
      expect(project.body.organization).toBe(first.organization_id);
    });

    it(
      'reuses the organization and project when run twice, with a new working key',
      async () => {
        const second = singleJsonLine(await cli('bootstrap', '--email', 'platform@cli.test'));

        expect(second.organization_id).toBe(first.organization_id);
        expect(second.project_id).toBe(first.project_id);
        expect(second.project_api_key).toBe(first.project_api_key);
        expect(second.personal_api_key).not.toBe(first.personal_api_key);
        const organizations = await client(second.personal_api_key).get('/api/organizations/');
        expect(organizations.body.count).toBe(1);
        expect((await client(first.personal_api_key).get('/api/organizations/')).status).toBe(200);
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'prints only the JSON line on stdout when run as `npm run admin -- bootstrap`',
      async () => {
        const result = await runCli(['bootstrap', '--email', 'platform@cli.test'], env, { viaNpm: true });

        const output = singleJsonLine(result);

        expect(Object.keys(output).sort()).toEqual(CONTRACT_FIELDS);
        expect(output.organization_id).toBe(first.organization_id);
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'names the organization and project after --organization and --project',
      async () => {
        const named = singleJsonLine(
          await cli(
            'bootstrap',
            '--email',
            'named@cli.test',
            '--organization',
            'Acme Platform',
            '--project',
            'Acme Web',
          ),
        );
        const api = client(named.personal_api_key);

        const organization = await api.get(`/api/organizations/${String(named.organization_id)}/`);
        const project = await api.get(`/api/projects/${String(named.project_id)}/`);

        expect(named.organization_id).not.toBe(first.organization_id);
        expect(organization.body.name).toBe('Acme Platform');
        expect(project.body.name).toBe('Acme Web');
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'fails on stderr, with nothing on stdout, for an invalid e-mail',
      async () => {
        expectFailure(await cli('bootstrap', '--email', 'not-an-email'), 'Enter a valid email address.');
      },
      CLI_TIMEOUT_MS,
    );
  });

  describe('create-key', () => {
    it(
      'prints only {"personal_api_key"} and the key carries exactly the listed scopes',
      async () => {
        const output = singleJsonLine(
          await cli(
            'create-key',
            '--email',
            'platform@cli.test',
            '--scopes',
            'organization:read,organization_member:write',
          ),
        );

        expect(Object.keys(output)).toEqual(['personal_api_key']);
        expect(output.personal_api_key).toEqual(expect.stringMatching(/^phx_[A-Za-z0-9]{20,}$/));
        const api = client(output.personal_api_key);
        expect((await api.get('/api/organizations/')).status).toBe(200);
        expect((await api.get(`/api/organizations/${String(first.organization_id)}/members/`)).status).toBe(
          200,
        );
        const refused = await api.post('/api/organizations/', { name: 'Not allowed' });
        expect(refused.status).toBe(403);
        expect(refused.body.detail).toBe("API key missing required scope 'organization:write'");
        expect((await api.get(`/api/projects/${String(first.project_id)}/`)).status).toBe(403);
      },
      CLI_TIMEOUT_MS,
    );

    it(
      "creates a key with scope '*' that may write",
      async () => {
        const output = singleJsonLine(
          await cli('create-key', '--email', 'platform@cli.test', '--scopes', '*'),
        );

        const created = await client(output.personal_api_key).post('/api/organizations/', {
          name: 'Made by a CLI key',
        });

        expect(created.status).toBe(201);
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'fails with a message on stderr and nothing on stdout for an unknown scope',
      async () => {
        expectFailure(
          await cli('create-key', '--email', 'platform@cli.test', '--scopes', 'organization:read,bogus:read'),
          'bogus:read',
        );
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'fails when --organizations names an organization the user is not a member of',
      async () => {
        const outsider = singleJsonLine(
          await cli('bootstrap', '--email', 'outsider@cli.test', '--organization', 'Outsider'),
        );

        const result = await cli(
          'create-key',
          '--email',
          'platform@cli.test',
          '--scopes',
          '*',
          '--organizations',
          String(outsider.organization_id),
        );

        expectFailure(result, 'You must be a member of all organizations that you are scoping the key to.');
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'restricts a key to the organizations given with --organizations',
      async () => {
        const other = singleJsonLine(
          await cli('bootstrap', '--email', 'platform@cli.test', '--organization', 'Second organization'),
        );
        const output = singleJsonLine(
          await cli(
            'create-key',
            '--email',
            'platform@cli.test',
            '--scopes',
            '*',
            '--organizations',
            String(first.organization_id),
          ),
        );
        const api = client(output.personal_api_key);

        expect((await api.get(`/api/organizations/${String(first.organization_id)}/`)).status).toBe(200);
        expect((await api.get(`/api/organizations/${String(other.organization_id)}/`)).status).toBe(403);
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'fails for an e-mail that has no user',
      async () => {
        expectFailure(
          await cli('create-key', '--email', 'nobody@cli.test', '--scopes', '*'),
          'nobody@cli.test',
        );
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'fails with the usage when --scopes is missing',
      async () => {
        expectFailure(await cli('create-key', '--email', 'platform@cli.test'), '--scopes is required');
      },
      CLI_TIMEOUT_MS,
    );
  });

  describe('accept-invite', () => {
    it(
      'turns an invite into a membership at its level, and the invitee can then get a working key',
      async () => {
        const owner = client(first.personal_api_key);
        const invitesPath = `/api/organizations/${String(first.organization_id)}/invites/`;
        const invite = await owner.post(invitesPath, { target_email: 'invitee@cli.test', level: 8 });
        expect(invite.status).toBe(201);

        const accepted = singleJsonLine(
          await cli(
            'accept-invite',
            '--invite',
            invite.body.id,
            '--email',
            'invitee@cli.test',
            '--first-name',
            'Ivy',
          ),
        );

        expect(accepted).toEqual({
          user_uuid: expect.stringMatching(UUID),
          organization_id: first.organization_id,
          level: 8,
        });
        const members = await owner.get(`/api/organizations/${String(first.organization_id)}/members/`);
        const member = members.body.results.find(
          (entry: { user: { email: string } }) => entry.user.email === 'invitee@cli.test',
        );
        expect(member).toMatchObject({ level: 8, user: { uuid: accepted.user_uuid, first_name: 'Ivy' } });
        const invites = await owner.get(invitesPath);
        expect(invites.body.results.some((entry: { id: string }) => entry.id === invite.body.id)).toBe(false);

        const key = singleJsonLine(
          await cli('create-key', '--email', 'invitee@cli.test', '--scopes', 'organization:read'),
        );
        const organizations = await client(key.personal_api_key).get('/api/organizations/');
        expect(organizations.body.results).toEqual([
          expect.objectContaining({ id: first.organization_id, membership_level: 8 }),
        ]);
      },
      CLI_TIMEOUT_MS * 2,
    );

    it(
      'fails for another e-mail address and leaves the invite pending',
      async () => {
        const owner = client(first.personal_api_key);
        const invitesPath = `/api/organizations/${String(first.organization_id)}/invites/`;
        const invite = await owner.post(invitesPath, { target_email: 'intended@cli.test' });

        const result = await cli(
          'accept-invite',
          '--invite',
          invite.body.id,
          '--email',
          'someone-else@cli.test',
        );

        expectFailure(result, 'This invite is intended for another email address.');
        const invites = await owner.get(invitesPath);
        expect(invites.body.results.some((entry: { id: string }) => entry.id === invite.body.id)).toBe(true);
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'fails for an unknown invite',
      async () => {
        expectFailure(
          await cli(
            'accept-invite',
            '--invite',
            '00000000-0000-4000-8000-000000000000',
            '--email',
            'x@cli.test',
          ),
          'Invite not found.',
        );
      },
      CLI_TIMEOUT_MS,
    );
  });

  describe('set-plugins-access-level and set-app-global: the operator decides on pipeline apps', () => {
    const organizationPath = () => `/api/organizations/${String(first.organization_id)}/`;
    const appsPath = (organizationId: unknown, suffix = '') =>
      `/api/organizations/${String(organizationId)}/pipeline_frontend_apps/${suffix}`;

    it(
      'gives the first organization install, not root, and root only when the operator sets it',
      async () => {
        const owner = client(first.personal_api_key);
        expect((await owner.get(organizationPath())).body.plugins_access_level).toBe(6);
        const app = await owner.post(appsPath(first.organization_id), {
          plugin_type: 'source',
          name: 'Banner',
        });
        expect(app.status).toBe(201);
        const refused = await owner.patch(appsPath(first.organization_id, `${app.body.id}/`), {
          is_global: true,
        });
        expect([refused.status, refused.body.detail]).toEqual([
          403,
          "This organization can't manage global plugins!",
        ]);

        const raised = singleJsonLine(
          await cli(
            'set-plugins-access-level',
            '--organization',
            String(first.organization_id),
            '--level',
            'root',
          ),
        );
        expect(raised).toEqual({ organization_id: first.organization_id, plugins_access_level: 9 });
        expect((await owner.get(organizationPath())).body.plugins_access_level).toBe(9);
        const allowed = await owner.patch(appsPath(first.organization_id, `${app.body.id}/`), {
          is_global: false,
        });
        expect(allowed.status).toBe(200);

        const lowered = singleJsonLine(
          await cli(
            'set-plugins-access-level',
            '--organization',
            String(first.organization_id),
            '--level',
            '6',
          ),
        );
        expect(lowered).toEqual({ organization_id: first.organization_id, plugins_access_level: 6 });
      },
      CLI_TIMEOUT_MS * 3,
    );

    it(
      'shows an app to every organization once the operator makes it global, and hides it again',
      async () => {
        const owner = client(first.personal_api_key);
        const app = await owner.post(appsPath(first.organization_id), {
          plugin_type: 'source',
          name: 'Shared',
        });
        const other = await owner.post('/api/organizations/', { name: 'Another organization' });
        expect(other.status).toBe(201);
        expect((await owner.get(appsPath(other.body.id, `${app.body.id}/`))).status).toBe(404);

        const global = singleJsonLine(
          await cli('set-app-global', '--app', String(app.body.id), '--global', 'true'),
        );
        expect(global).toEqual({
          id: app.body.id,
          name: 'Shared',
          organization_id: first.organization_id,
          is_global: true,
        });
        const seen = await owner.get(appsPath(other.body.id, `${app.body.id}/`));
        expect([seen.status, seen.body.is_global]).toEqual([200, true]);

        singleJsonLine(await cli('set-app-global', '--app', String(app.body.id), '--global', 'false'));
        expect((await owner.get(appsPath(other.body.id, `${app.body.id}/`))).status).toBe(404);
      },
      CLI_TIMEOUT_MS * 3,
    );

    it(
      'fails clearly for an unknown level, organization or app, and a --global that is not a boolean',
      async () => {
        expectFailure(
          await cli(
            'set-plugins-access-level',
            '--organization',
            String(first.organization_id),
            '--level',
            'owner',
          ),
          '"owner" is not a plugins access level: none (0), config (3), install (6) or root (9).',
        );
        expectFailure(
          await cli(
            'set-plugins-access-level',
            '--organization',
            '00000000-0000-4000-8000-000000000000',
            '--level',
            'root',
          ),
          'No organization with id 00000000-0000-4000-8000-000000000000.',
        );
        expectFailure(
          await cli('set-app-global', '--app', '999999', '--global', 'true'),
          'No app with id 999999.',
        );
        expectFailure(
          await cli('set-app-global', '--app', '1', '--global', 'yes'),
          '--global must be true or false',
        );
      },
      CLI_TIMEOUT_MS * 4,
    );
  });

  describe('migrate', () => {
    let migrateDatabase: TestDatabase;
    let migrateEnv: Record<string, string>;
    let clickhouseDataPath: string;
    const migrate = (...args: string[]) => runCli(['migrate', ...args], migrateEnv);

    /** Runs a query on the CLI's chDB data path from another process, once nothing else holds it. */
    async function queryChdb(sql: string): Promise<string> {
      const result = await runProcess('node', ['-e', CHDB_SCRIPT, clickhouseDataPath, sql], {
        cwd: REPO_ROOT,
        env: process.env,
        timeoutMs: CLI_TIMEOUT_MS - 5_000,
      });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      return result.stdout;
    }

    beforeAll(async () => {
      migrateDatabase = await createTestDatabase();
      const migrateDataDir = path.join(dataDir, 'migrate');
      clickhouseDataPath = path.join(migrateDataDir, 'clickhouse');
      // Empty values count as unset: the embedded chDB under DATA_DIR and no Kafka, whatever the
      // environment running the tests says.
      migrateEnv = {
        ...env,
        DATABASE_URL: migrateDatabase.url,
        DATA_DIR: migrateDataDir,
        CLICKHOUSE_URL: '',
        CLICKHOUSE_CLUSTER: '',
        CLICKHOUSE_DATABASE: '',
        CLICKHOUSE_DATA_PATH: '',
        KAFKA_BROKERS: '',
      };
    });

    afterAll(async () => {
      await migrateDatabase?.drop();
    });

    it(
      'applies every Postgres and ClickHouse migration, then none when run again, and skips Kafka without brokers',
      async () => {
        const postgresMigrations = MIGRATIONS.map((Migration) => new Migration().name);
        const clickhouseMigrations = (await loadClickHouseMigrations('single-node')).map(
          (migration) => migration.name,
        );
        const postgresTarget = new URL(migrateDatabase.url);
        postgresTarget.password = '***';
        const clickhouseTarget = `embedded chDB in ${clickhouseDataPath}, database hogbase`;

        const first = singleJsonLine(await migrate());
        const second = singleJsonLine(await migrate());

        expect(first).toEqual({
          migrated: true,
          postgres: { target: postgresTarget.toString(), applied: postgresMigrations },
          clickhouse: { target: clickhouseTarget, database: 'hogbase', applied: clickhouseMigrations },
          kafka: null,
        });
        expect(postgresMigrations.length).toBeGreaterThan(0);
        expect(clickhouseMigrations.length).toBeGreaterThan(0);
        expect(second).toEqual({
          migrated: true,
          postgres: { target: postgresTarget.toString(), applied: [] },
          clickhouse: { target: clickhouseTarget, database: 'hogbase', applied: [] },
          kafka: null,
        });
        const client = new Client({ connectionString: migrateDatabase.url });
        await client.connect();
        try {
          const tables = await client.query<{ persons: string | null }>(
            "SELECT to_regclass('persons')::text AS persons",
          );
          expect(tables.rows).toEqual([{ persons: 'persons' }]);
        } finally {
          await client.end();
        }
        expect(
          await queryChdb("SELECT name FROM system.tables WHERE database = 'hogbase' AND name = 'events'"),
        ).toBe('events\n');
      },
      CLI_TIMEOUT_MS * 2,
    );

    it(
      'creates the event topics on the Kafka brokers, and finds them there when run again',
      async () => {
        if (brokers.length === 0) {
          throw new Error('KAFKA_BROKERS is not set: run through `npm test`, which starts a broker');
        }
        const kafkaEnv = { ...migrateEnv, KAFKA_BROKERS: brokers.join(',') };
        const topicNames = [EVENTS_TOPIC, HISTORICAL_EVENTS_TOPIC, DEAD_LETTER_TOPIC];

        const first = singleJsonLine(await runCli(['migrate', '--only', 'kafka'], kafkaEnv));
        const second = singleJsonLine(await runCli(['migrate', '--only', 'kafka'], kafkaEnv));

        const topics = (first.kafka as { topics: { name: string; created: boolean; partitions: number }[] })
          .topics;
        expect(first).toEqual({
          migrated: true,
          postgres: null,
          clickhouse: null,
          kafka: { brokers, topics: expect.any(Array) },
        });
        expect(topics.map((topic) => topic.name)).toEqual(topicNames);
        // The shared broker may already hold them (other tests create them too): then they are left as they are.
        const admin = createKafkaClient({ brokers, clientId: 'admin-cli-test' }).admin();
        await admin.connect();
        try {
          const metadata = await admin.fetchTopicMetadata({ topics: topicNames });
          expect(
            metadata.topics.map((topic) => ({ name: topic.name, partitions: topic.partitions.length })),
          ).toEqual(expect.arrayContaining(topics.map(({ name, partitions }) => ({ name, partitions }))));
        } finally {
          await admin.disconnect();
        }
        expect(second.kafka).toEqual({
          brokers,
          topics: topics.map((topic) => ({ ...topic, created: false })),
        });
      },
      CLI_TIMEOUT_MS * 2,
    );

    it(
      'fails with a clear message, not a stack, while another process holds the embedded ClickHouse',
      async () => {
        const holder = spawn('node', ['-e', CHDB_SCRIPT, clickhouseDataPath, 'SELECT 1', 'hold'], {
          cwd: REPO_ROOT,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        try {
          const answer = await Promise.race([
            once(holder.stdout, 'data').then(([chunk]) => String(chunk)),
            once(holder, 'exit').then(() => 'the holder exited before opening chDB'),
          ]);
          expect(answer).toBe('1\n');

          const result = await migrate('--only', 'clickhouse');

          expectFailure(
            result,
            `error: cannot open the embedded ClickHouse (chDB) in ${clickhouseDataPath}: another process may hold it`,
          );
          expect(result.stderr).toContain('`migrate --only postgres`');
          expect(result.stderr).not.toMatch(/^\s+at /m);
        } finally {
          holder.stdin.end();
          if (holder.exitCode === null) await once(holder, 'exit');
        }
      },
      CLI_TIMEOUT_MS,
    );

    it(
      'fails with the usage for an unknown step in --only, and for --only kafka without KAFKA_BROKERS',
      async () => {
        expectFailure(
          await migrate('--only', 'postgres,elasticsearch'),
          /--only: elasticsearch is not one of postgres, clickhouse, kafka[\s\S]*Usage:/,
        );
        expectFailure(
          await migrate('--only', 'kafka'),
          /KAFKA_BROKERS=: is required by --only kafka[\s\S]*Usage:/,
        );
      },
      CLI_TIMEOUT_MS * 2,
    );
  });

  it(
    'fails with the usage for an unknown command',
    async () => {
      expectFailure(await cli('make-coffee'), /unknown command make-coffee[\s\S]*Usage:/);
    },
    CLI_TIMEOUT_MS,
  );
});
