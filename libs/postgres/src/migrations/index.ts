import { CreateManagementCore1763790000000 } from './1763790000000-CreateManagementCore';
import { CreatePersonsAndGroups1763800000000 } from './1763800000000-CreatePersonsAndGroups';
import { CreateFeatureFlags1763900000000 } from './1763900000000-CreateFeatureFlags';
import { CreateBatchExports1764000000000 } from './1764000000000-CreateBatchExports';
import { AddPersonsUpdatedAt1764100000000 } from './1764100000000-AddPersonsUpdatedAt';
import { CreatePipelineApps1764200000000 } from './1764200000000-CreatePipelineApps';
import { AddRemoteConfigAndSecretKeys1764300000000 } from './1764300000000-AddRemoteConfigAndSecretKeys';
import { RestrictGlobalApps1764400000000 } from './1764400000000-RestrictGlobalApps';
import { AddPluginStorageUsage1764470000000 } from './1764470000000-AddPluginStorageUsage';
import { AddPinnedCapabilities1764480000000 } from './1764480000000-AddPinnedCapabilities';
import { AddDeclaredPluginFields1764490000000 } from './1764490000000-AddDeclaredPluginFields';

/** In order. A landed migration is never edited: add a new one. */
export const MIGRATIONS = [
  CreateManagementCore1763790000000,
  CreatePersonsAndGroups1763800000000,
  CreateFeatureFlags1763900000000,
  CreateBatchExports1764000000000,
  AddPersonsUpdatedAt1764100000000,
  CreatePipelineApps1764200000000,
  AddRemoteConfigAndSecretKeys1764300000000,
  RestrictGlobalApps1764400000000,
  AddPluginStorageUsage1764470000000,
  AddPinnedCapabilities1764480000000,
  AddDeclaredPluginFields1764490000000,
];
