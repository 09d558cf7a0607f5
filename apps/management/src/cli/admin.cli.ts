import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { ConfigError, loadManagementConfig } from '@hogbase/config';
import { ApiError, BootstrapService, InviteService, ManagementModule } from '@hogbase/management-api';
import { EmbeddedPostgres, findRunningEmbeddedPostgres, startEmbeddedPostgres } from '@hogbase/postgres';

const USAGE = `Usage: npm run admin -- <command> [options]

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
  migrate
      Applies pending Postgres migrations. Prints {"migrated": true}.

Database: DATABASE_URL, else the embedded Postgres under DATA_DIR (through the running server when there is one).
Only the JSON result goes to stdout; errors go to stderr with a non-zero exit code.`;

const list = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value.trim();
}

class UsageError extends Error {}

async function main(argv: string[]): Promise<unknown> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help') {
    process.stderr.write(`${USAGE}\n`);
    return undefined;
  }
  const { values } = parseArgs({
    args: rest,
    strict: true,
    options: {
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
    },
  });
  if (!['bootstrap', 'create-key', 'revoke-key', 'accept-invite', 'migrate'].includes(command)) {
    throw new UsageError(`unknown command ${command}`);
  }

  const config = loadManagementConfig();
  let embedded: EmbeddedPostgres | undefined;
  let databaseUrl = config.database.url ?? (await findRunningEmbeddedPostgres(config.dataDir));
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres(config.dataDir, { maxConnections: 2 });
    databaseUrl = embedded.url;
  }
  const context = await NestFactory.createApplicationContext(
    ManagementModule.forRoot({
      config: { ...config, database: { ...config.database, poolSize: 2 } },
      databaseUrl,
    }),
    { logger: false, abortOnError: false },
  );
  try {
    const bootstrap = context.get(BootstrapService);
    switch (command) {
      case 'bootstrap':
        return await bootstrap.bootstrap({
          email: required(values, 'email'),
          organizationName: values.organization,
          projectName: values.project,
        });
      case 'create-key': {
        const projects = list(values.projects).map((id) => {
          if (!/^\d+$/.test(id)) throw new UsageError(`--projects: ${id} is not a project id`);
          return Number(id);
        });
        const key = await bootstrap.createPersonalApiKey({
          email: required(values, 'email'),
          scopes: list(required(values, 'scopes')),
          label: values.label,
          scopedOrganizations: list(values.organizations),
          scopedTeams: projects,
        });
        return { personal_api_key: key };
      }
      case 'revoke-key':
        return { revoked: await bootstrap.revokePersonalApiKey(required(values, 'key')) };
      case 'accept-invite': {
        const { user, membership } = await context
          .get(InviteService)
          .accept(required(values, 'invite'), required(values, 'email'), {
            firstName: values['first-name'],
            lastName: values['last-name'],
          });
        return { user_uuid: user.uuid, organization_id: membership.organizationId, level: membership.level };
      }
      default:
        // Opening the module already applied every pending migration.
        return { migrated: true };
    }
  } finally {
    await context.close();
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (result) => {
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    if (error instanceof ApiError)
      process.stderr.write(`error: ${error.detail}${error.attr ? ` (${error.attr})` : ''}\n`);
    else if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`error: ${(error as Error).message}\n\n${USAGE}\n`);
    } else
      process.stderr.write(
        `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
    process.exitCode = 1;
  },
);
