import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccessGuard } from './access.guard';
import { PersonalApiKeyService } from './personal-api-key.service';

/** Who is calling and what they may reach: the guard every route passes. */
@Module({ providers: [PersonalApiKeyService, { provide: APP_GUARD, useClass: AccessGuard }] })
export class AuthModule {}
