import { Module } from '@nestjs/common';
import { PersonalApiKeyRepository } from './personal-api-key.repository';
import { UserController } from './user.controller';

/** The user repository itself comes from OrganizationsModule (see there why). */
@Module({
  controllers: [UserController],
  providers: [PersonalApiKeyRepository],
  exports: [PersonalApiKeyRepository],
})
export class UsersModule {}
