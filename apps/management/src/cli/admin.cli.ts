import 'reflect-metadata';
import { ClickHouseMigrationError } from '@hogbase/clickhouse';
import { ConfigError, loadManagementConfig } from '@hogbase/config';
import { ApiError } from '@hogbase/management-api';
import { QueueUnavailableError } from '@hogbase/queue';
import { parseAdminArguments, USAGE, type AdminCommand } from './admin-arguments.util';
import { runOnManagement, type AdminCommandHandler } from './admin-context.util';
import { AdminError, UsageError } from './admin.errors';
import { acceptInviteCommand } from './commands/accept-invite.handler';
import { bootstrapCommand } from './commands/bootstrap.handler';
import { createKeyCommand } from './commands/create-key.handler';
import { migrate } from './commands/migrate.handler';
import { waitForMigrations } from './commands/migrate-wait.handler';
import { revokeKeyCommand } from './commands/revoke-key.handler';
import { setAppGlobalCommand } from './commands/set-app-global.handler';
import { setPluginsAccessLevelCommand } from './commands/set-plugins-access-level.handler';

/** The commands that run on the management services; migrate opens the stores itself. */
const MANAGEMENT_COMMANDS: Record<Exclude<AdminCommand, 'migrate'>, AdminCommandHandler> = {
  bootstrap: bootstrapCommand,
  'create-key': createKeyCommand,
  'revoke-key': revokeKeyCommand,
  'accept-invite': acceptInviteCommand,
  'set-plugins-access-level': setPluginsAccessLevelCommand,
  'set-app-global': setAppGlobalCommand,
};

async function main(argv: string[]): Promise<unknown> {
  const parsed = parseAdminArguments(argv);
  if (parsed === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return undefined;
  }
  const { command, options } = parsed;

  // SECURITY: the embedded Postgres and chDB this command may open write under DATA_DIR, which
  // holds events and key hashes: what they create is for this user only, as with `npm start`.
  process.umask(0o077);
  const config = loadManagementConfig();
  if (command === 'migrate') {
    return options.wait
      ? waitForMigrations(config, options.only, options.timeout)
      : migrate(config, options.only);
  }
  return runOnManagement(config, MANAGEMENT_COMMANDS[command], options);
}

main(process.argv.slice(2)).then(
  (result) => {
    if (result !== undefined) process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (error: unknown) => {
    if (error instanceof ApiError)
      process.stderr.write(`error: ${error.detail}${error.attr ? ` (${error.attr})` : ''}\n`);
    else if (
      error instanceof AdminError ||
      error instanceof ClickHouseMigrationError ||
      error instanceof QueueUnavailableError
    )
      process.stderr.write(`error: ${error.message}\n`);
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
