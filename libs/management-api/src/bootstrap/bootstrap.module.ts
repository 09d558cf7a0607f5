import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { PipelineAppsModule } from '../plugins/pipeline-apps.module';
import { ProjectsModule } from '../projects/projects.module';
import { BootstrapService } from './bootstrap.service';

@Module({
  imports: [AuthModule, OrganizationsModule, ProjectsModule, PipelineAppsModule],
  providers: [BootstrapService],
  exports: [BootstrapService],
})
export class BootstrapModule {}
