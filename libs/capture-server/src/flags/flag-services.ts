import type { Pool } from 'pg';
import { FlagStore, pgSqlClient } from '@hogbase/flag-store';
import { FlagDefinitionsCache, type FlagDefinitionsCacheOptions } from './flag-definitions.cache';
import type { FlagServices } from './flags.routes';
import { PersonalKeyAuthorizer } from './personal-key.authorizer';

/** Flag evaluation for capture's SDK endpoints, over capture's Postgres pool. */
export function createFlagServices(pool: Pool, options: FlagDefinitionsCacheOptions = {}): FlagServices {
  const store = new FlagStore(pgSqlClient(pool));
  return {
    store,
    definitions: new FlagDefinitionsCache(store, options),
    keys: new PersonalKeyAuthorizer(pool),
  };
}
