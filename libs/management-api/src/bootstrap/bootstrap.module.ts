import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { BootstrapService } from './bootstrap.service';

@Module({ imports: [OrganizationsModule], providers: [BootstrapService], exports: [BootstrapService] })
export class BootstrapModule {}
