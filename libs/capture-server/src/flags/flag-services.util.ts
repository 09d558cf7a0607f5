import type { Pool } from 'pg';
import { FlagStore, pgSqlClient } from '@hogbase/flag-store';
import { FlagDefinitionsCache, type FlagDefinitionsCacheOptions } from './flag-definitions.cache';
import type { FlagServices } from './flags.controller';
import { PersonalKeyAuthorizer } from './personal-key.guard';

export function createFlagServices(pool: Pool, options: FlagDefinitionsCacheOptions = {}): FlagServices {
  const store = new FlagStore(pgSqlClient(pool));
  return {
    store,
    definitions: new FlagDefinitionsCache(store, options),
    keys: new PersonalKeyAuthorizer(pool),
  };
}
