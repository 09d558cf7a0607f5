import { randomBytes } from 'node:crypto';
import type { ModuleMetadata, Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { loadManagementConfig, type ManagementConfig } from '@hogbase/config';
import { openDataSource, postgresDataSourceOptions } from '@hogbase/postgres';
import { createTestDatabase, type TestDatabase } from '@hogbase/test-support';
import { CoreModule } from '../core.module';
import { PersistenceModule } from '../persistence/persistence.module';

/** A feature's modules on a fresh, migrated Postgres database of their own, without HTTP. */
export interface FeatureTestContext {
  module: TestingModule;
  dataSource: DataSource;
  config: ManagementConfig;
  get<T>(type: Type<T>): T;
  close(): Promise<void>;
}

/**
 * The fast tier: a feature's services and repositories against the real test Postgres, so a rule
 * is tested where it lives rather than only through the HTTP layer.
 */
export async function createFeatureTestingModule(
  imports: NonNullable<ModuleMetadata['imports']>,
  overrides: Partial<ManagementConfig> = {},
): Promise<FeatureTestContext> {
  const database: TestDatabase = await createTestDatabase();
  const connection = { url: database.url, poolSize: 4, applicationName: 'management-spec' };
  const config: ManagementConfig = {
    ...loadManagementConfig({ LOG_LEVEL: 'silent', DATA_DIR: '/tmp/hogbase-test-unused' }),
    encryptionKeys: [randomBytes(32)],
    egress: { allowedPrivateNetworks: ['127.0.0.0/8'], ownPorts: [] },
    ...overrides,
  };
  let module: TestingModule;
  try {
    module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => postgresDataSourceOptions(connection),
          dataSourceFactory: () => openDataSource(connection),
        }),
        CoreModule.forRoot(config, null),
        PersistenceModule,
        ...imports,
      ],
    }).compile();
    await module.init();
  } catch (error) {
    await database.drop();
    throw error;
  }
  return {
    module,
    dataSource: module.get(DataSource),
    config,
    get: (type) => module.get(type, { strict: false }),
    async close() {
      try {
        await module.close();
      } finally {
        await database.drop();
      }
    },
  };
}
