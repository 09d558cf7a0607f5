import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { UsersModule } from '../users/users.module';
import { AppGlobalRepository } from './app-global.repository';
import { BootstrapService } from './bootstrap.service';

@Module({
  imports: [OrganizationsModule, UsersModule],
  providers: [BootstrapService, AppGlobalRepository],
  exports: [BootstrapService],
})
export class BootstrapModule {}
