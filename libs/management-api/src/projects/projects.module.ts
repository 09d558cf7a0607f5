import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { OrganizationProjectController, ProjectController } from './project.controller';
import { ProjectService } from './project.service';

@Module({
  imports: [OrganizationsModule],
  controllers: [OrganizationProjectController, ProjectController],
  providers: [ProjectService],
})
export class ProjectsModule {}
