import { parseArgs } from 'node:util';
import { UsageError } from './admin.errors';

export const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  bootstrap --email <e> [--organization <name>] [--project <name>]
      Creates (or reuses) the user, organization and project, and a new personal API key with scope *.
      Prints {"email","personal_api_key","organization_id","project_id","project_api_key"}.
  create-key --email <e> --scopes <'*' or comma list> [--organizations <ids>] [--projects <ids>] [--label <l>]
      Prints {"personal_api_key": "phx_..."}.
  revoke-key --key <phx_...>
      Prints {"revoked": true|false}.
  accept-invite --invite <id> --email <e> [--first-name <n>] [--last-name <n>]
      Turns an invite into a membership. Prints {"user_uuid","organization_id","level"}.
  set-plugins-access-level --organization <id> --level <none|config|install|root>
      What the organization may do with pipeline apps (0, 3, 6, 9 also accepted): new organizations get
      install (their admins install their own apps); root also makes apps global through the API.
      Prints {"organization_id","plugins_access_level"}.
  set-app-global --app <id> --global <true|false>
      Shows a pipeline app to every organization (or stops). Another organization that enables it runs
      the code it enabled until its admin upgrades its config. Prints {"id","name","organization_id","is_global"}.
  migrate [--only <postgres,clickhouse,kafka>]
      Applies the pending Postgres migrations, then the pending ClickHouse migrations, then creates the
      missing Kafka topics (only with KAFKA_BROKERS: the in-process bus has no topics); --only runs the
      steps listed. Prints {"migrated": true, "postgres": {"target","applied"},
      "clickhouse": {"target","database","applied"}, "kafka": {"brokers","topics": [{"name","created","partitions"}]}},
      "applied" naming the migrations this run applied; a step that did not run is null.
  migrate --wait [--only <steps>] [--timeout <seconds>]
      Applies nothing: waits until another process (the deployment's migrate Job) has applied every
      Postgres and ClickHouse migration and created the topics, retrying while they are unreachable.
      Prints {"migrated": true, "waited_seconds"}; exits 1 after --timeout seconds (default 600).
      While \`npm start\` runs on the embedded chDB, no other process may open it (the server migrated
      ClickHouse when it started): leave clickhouse out of --only then.

Database: DATABASE_URL, else the embedded Postgres under DATA_DIR (through the running server when there is one).
ClickHouse: CLICKHOUSE_URL, else the embedded chDB under CLICKHOUSE_DATA_PATH (DATA_DIR/clickhouse). Kafka: KAFKA_BROKERS.
Only the JSON result goes to stdout; errors go to stderr with a non-zero exit code.`;

export const ADMIN_COMMANDS = [
  'bootstrap',
  'create-key',
  'revoke-key',
  'accept-invite',
  'set-plugins-access-level',
  'set-app-global',
  'migrate',
] as const;
export type AdminCommand = (typeof ADMIN_COMMANDS)[number];

const OPTIONS = {
  email: { type: 'string' },
  organization: { type: 'string' },
  project: { type: 'string' },
  scopes: { type: 'string' },
  organizations: { type: 'string' },
  projects: { type: 'string' },
  label: { type: 'string' },
  key: { type: 'string' },
  invite: { type: 'string' },
  'first-name': { type: 'string' },
  'last-name': { type: 'string' },
  only: { type: 'string' },
  wait: { type: 'boolean' },
  timeout: { type: 'string' },
  level: { type: 'string' },
  app: { type: 'string' },
  global: { type: 'string' },
} as const;

function parseOptions(args: string[]) {
  return parseArgs({ args, strict: true, options: OPTIONS }).values;
}

export type AdminOptions = ReturnType<typeof parseOptions>;

export interface AdminArguments {
  command: AdminCommand;
  /** `--global` comes trimmed and lower-cased, `true` or `false` for set-app-global. */
  options: AdminOptions;
}

/**
 * The command and its options, checked before anything connects. Undefined asks for the usage
 * (no command, `help`, `--help`); an unknown option throws node's ERR_PARSE_ARGS_* error.
 */
export function parseAdminArguments(argv: string[]): AdminArguments | undefined {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') return undefined;
  const options = parseOptions(rest);
  const known = ADMIN_COMMANDS.find((candidate) => candidate === command);
  if (!known) throw new UsageError(`unknown command ${command}`);
  const global = options.global === undefined ? undefined : options.global.trim().toLowerCase();
  if (known === 'set-app-global' && global !== 'true' && global !== 'false') {
    throw new UsageError('--global must be true or false');
  }
  return { command: known, options: { ...options, global } };
}

export const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

export function required(options: AdminOptions, name: keyof AdminOptions): string {
  const value = options[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}
