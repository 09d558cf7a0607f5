import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { ManagementConfig } from '@hogbase/config';
import { ManagementModule } from '@hogbase/management-api';
import { findRunningEmbeddedPostgres, startEmbeddedPostgres, type EmbeddedPostgres } from '@hogbase/postgres';
import type { AdminOptions } from './admin-arguments.util';

/** One command that runs on the management services; what it returns is printed as JSON. */
export type AdminCommandHandler = (
  context: INestApplicationContext,
  options: AdminOptions,
) => Promise<unknown>;

/** DATABASE_URL, else the running server's embedded Postgres, else one started for this command. */
export async function connectPostgres(
  config: ManagementConfig,
): Promise<{ databaseUrl: string; embedded: EmbeddedPostgres | undefined }> {
  const databaseUrl = config.database.url ?? (await findRunningEmbeddedPostgres(config.dataDir));
  if (databaseUrl) return { databaseUrl, embedded: undefined };
  const embedded = await startEmbeddedPostgres(config.dataDir, { maxConnections: 2 });
  return { databaseUrl: embedded.url, embedded };
}

/** Runs `handler` on the management module (without HTTP), then closes it and any Postgres it started. */
export async function runOnManagement(
  config: ManagementConfig,
  handler: AdminCommandHandler,
  options: AdminOptions,
): Promise<unknown> {
  const { databaseUrl, embedded } = await connectPostgres(config);
  const context = await NestFactory.createApplicationContext(
    ManagementModule.forRoot({
      config: { ...config, database: { ...config.database, poolSize: 2 } },
      databaseUrl,
    }),
    { logger: false, abortOnError: false },
  );
  try {
    return await handler(context, options);
  } finally {
    await context.close();
    await embedded?.stop();
  }
}
