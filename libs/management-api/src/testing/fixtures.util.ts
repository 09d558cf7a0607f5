import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { MembershipLevel, OrganizationMembership, User } from '@hogbase/postgres';
import type { ResolvedProject } from '../auth/access.decorator';
import { MembershipRepository } from '../members/membership.repository';
import { OrganizationProvisioningService } from '../organizations/organization-provisioning.service';
import { OrganizationRepository } from '../organizations/organization.repository';
import { UnitOfWork } from '../persistence/unit-of-work.service';
import { ProjectRepository } from '../projects/project.repository';
import { UserRepository } from '../users/user.repository';

/** A user with a verified e-mail of its own. */
export async function seedUser(
  dataSource: DataSource,
  email = `${randomUUID()}@example.test`,
): Promise<User> {
  const users = dataSource.getRepository(User);
  const uuid = randomUUID();
  return users.save(users.create({ uuid, distinctId: uuid, email, isEmailVerified: true }));
}

/**
 * An organization with its first project, created as the API creates one, owned by `owner` (a new
 * user when absent): what an access-checked request would resolve.
 */
export async function seedProject(
  dataSource: DataSource,
  owner?: User,
  name = 'Acme',
): Promise<ResolvedProject & { user: User }> {
  const user = owner ?? (await seedUser(dataSource));
  const { organization, team } = await provisioningOn(dataSource).createOrganization(user, { name });
  const membership = await dataSource
    .getRepository(OrganizationMembership)
    .findOneByOrFail({ organizationId: organization.id, userId: user.id });
  return { user, organization, membership, team };
}

function provisioningOn(dataSource: DataSource): OrganizationProvisioningService {
  const unitOfWork = new UnitOfWork(dataSource);
  return new OrganizationProvisioningService(
    unitOfWork,
    new OrganizationRepository(unitOfWork),
    new MembershipRepository(unitOfWork),
    new ProjectRepository(unitOfWork),
    new UserRepository(unitOfWork),
  );
}

/** `user` joins the project's organization at `level`; returns what their requests resolve. */
export async function seedMember(
  dataSource: DataSource,
  project: ResolvedProject,
  level: MembershipLevel = MembershipLevel.Member,
  user?: User,
): Promise<ResolvedProject & { user: User }> {
  const member = user ?? (await seedUser(dataSource));
  const memberships = dataSource.getRepository(OrganizationMembership);
  const membership = await memberships.save(
    memberships.create({
      id: randomUUID(),
      organizationId: project.organization.id,
      userId: member.id,
      level,
    }),
  );
  return { ...project, user: member, membership };
}
