import { Module } from '@nestjs/common';
import { OrganizationProvisioningService } from './organization-provisioning.service';
import { OrganizationController } from './organization.controller';
import { OrganizationService } from './organization.service';

@Module({
  controllers: [OrganizationController],
  providers: [OrganizationService, OrganizationProvisioningService],
  exports: [OrganizationProvisioningService],
})
export class OrganizationsModule {}
