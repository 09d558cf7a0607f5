import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard } from './access.guard';
import { AccessRepository } from './access.repository';
import { OrganizationAccessService } from './organization-access.service';
import { PersonalApiKeyRepository } from './personal-api-key.repository';
import { PersonalApiKeyService } from './personal-api-key.service';

/** Who is calling and what they may reach: the guard every route passes. */
@Module({
  providers: [
    PersonalApiKeyRepository,
    PersonalApiKeyService,
    AccessRepository,
    OrganizationAccessService,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AccessRepository, OrganizationAccessService, PersonalApiKeyService],
})
export class AuthModule {}
