import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { ProjectsModule } from '../projects/projects.module';
import { AppGlobalRepository } from './app-global.repository';
import { BootstrapService } from './bootstrap.service';

@Module({
  imports: [AuthModule, OrganizationsModule, ProjectsModule],
  providers: [BootstrapService, AppGlobalRepository],
  exports: [BootstrapService],
})
export class BootstrapModule {}
