import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  FeatureFlag,
  OrganizationResourceAccess,
  ResourceAccessLevel,
  Role,
  RoleMembership,
  type User,
} from '@hogbase/postgres';
import type { ResolvedOrganization, ResolvedProject } from '../auth/access.decorator';
import { FEATURE_FLAGS_RESOURCE } from '../roles/role.repository';

/** A flag of the project created by `creator`. */
export async function seedFlag(
  dataSource: DataSource,
  project: ResolvedProject,
  creator: User,
): Promise<FeatureFlag> {
  const flags = dataSource.getRepository(FeatureFlag);
  return flags.save(
    flags.create({ teamId: project.team.id, key: `flag-${randomUUID()}`, createdById: creator.id }),
  );
}

/** A role of the organization at `level`, held by `members`. */
export async function seedRole(
  dataSource: DataSource,
  { organization }: ResolvedOrganization,
  level: ResourceAccessLevel = ResourceAccessLevel.CanAlwaysEdit,
  members: readonly User[] = [],
): Promise<Role> {
  const role = await dataSource.getRepository(Role).save({
    id: randomUUID(),
    organizationId: organization.id,
    name: `role-${randomUUID()}`,
    featureFlagsAccessLevel: level,
    createdById: null,
  });
  for (const member of members) {
    await dataSource
      .getRepository(RoleMembership)
      .insert({ id: randomUUID(), roleId: role.id, userId: member.id });
  }
  return role;
}

/** The organization's default level for flags (organization_resource_access). */
export async function setFlagsAccessLevel(
  dataSource: DataSource,
  { organization }: ResolvedOrganization,
  level: ResourceAccessLevel,
): Promise<void> {
  await dataSource
    .getRepository(OrganizationResourceAccess)
    .insert({ organizationId: organization.id, resource: FEATURE_FLAGS_RESOURCE, accessLevel: level });
}
