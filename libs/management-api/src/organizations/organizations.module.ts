import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ProjectsModule } from '../projects/projects.module';
import { OrganizationProvisioningService } from './organization-provisioning.service';
import { OrganizationController } from './organization.controller';
import { OrganizationRepository } from './organization.repository';
import { OrganizationService } from './organization.service';

@Module({
  imports: [AuthModule, ProjectsModule],
  controllers: [OrganizationController],
  providers: [OrganizationService, OrganizationProvisioningService, OrganizationRepository],
  exports: [OrganizationProvisioningService, OrganizationRepository],
})
export class OrganizationsModule {}
