import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { MembershipRepository } from '../members/membership.repository';
import { UserRepository } from '../users/user.repository';
import { AccessGuard } from './access.guard';
import { AccessRepository } from './access.repository';
import { OrganizationAccessService } from './organization-access.service';
import { PersonalApiKeyRepository } from './personal-api-key.repository';

/**
 * The guard and the repositories it resolves with, which features get here: a module with
 * controllers imported by an earlier feature would move its routes ahead of that feature's.
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
