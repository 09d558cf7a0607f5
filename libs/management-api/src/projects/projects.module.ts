import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { OrganizationProjectController, ProjectController } from './project.controller';
import { ProjectRepository } from './project.repository';
import { ProjectService } from './project.service';

@Module({
  imports: [AuthModule],
  controllers: [OrganizationProjectController, ProjectController],
  providers: [ProjectService, ProjectRepository],
  exports: [ProjectRepository],
})
export class ProjectsModule {}
