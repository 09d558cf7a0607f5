import { Environment, readString } from './env.util';
import { loadManagementConfig, ManagementConfig } from './management.config';

export interface StandaloneConfig {
  management: ManagementConfig;
  /** E-mail of the admin the first start creates. */
  initialAdminEmail: string;
}

export function loadStandaloneConfig(env: Environment = process.env): StandaloneConfig {
  return {
    management: loadManagementConfig(env),
    initialAdminEmail: readString(env, 'INITIAL_ADMIN_EMAIL', 'admin@hogbase.local'),
  };
}
