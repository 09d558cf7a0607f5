import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { MembershipRepository } from '../members/membership.repository';
import { UserRepository } from '../users/user.repository';
import { AccessGuard } from './access.guard';
import { AccessRepository } from './access.repository';
import { OrganizationAccessService } from './organization-access.service';
import { PersonalApiKeyRepository } from './personal-api-key.repository';

/**
 * Who is calling and what they may reach: the guard every route passes, and the repositories of
 * what it resolves (users, their personal API keys, their memberships). The features use those
 * repositories too and get them here: a module with controllers imported from a feature listed
 * before it in ManagementModule would move its routes ahead of that feature's.
 */
@Module({
  providers: [
    PersonalApiKeyRepository,
    UserRepository,
    MembershipRepository,
    AccessRepository,
    OrganizationAccessService,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [
    PersonalApiKeyRepository,
    UserRepository,
    MembershipRepository,
    AccessRepository,
    OrganizationAccessService,
  ],
})
export class AuthModule {}
