import { Module } from '@nestjs/common';
import { MembershipRepository } from '../members/membership.repository';
import { UserRepository } from '../users/user.repository';
import { OrganizationProvisioningService } from './organization-provisioning.service';
import { OrganizationController } from './organization.controller';
import { OrganizationRepository } from './organization.repository';
import { OrganizationService } from './organization.service';

/**
 * Also provides the membership and user repositories, which members, invites and bootstrap use
 * too: Nest registers a module's routes where it first scans it, so importing MembersModule or
 * UsersModule from here would move their routes ahead of the projects' ones.
 */
@Module({
  controllers: [OrganizationController],
  providers: [
    OrganizationService,
    OrganizationProvisioningService,
    OrganizationRepository,
    MembershipRepository,
    UserRepository,
  ],
  exports: [OrganizationProvisioningService, OrganizationRepository, MembershipRepository, UserRepository],
})
export class OrganizationsModule {}
