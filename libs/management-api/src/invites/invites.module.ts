import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { InviteMailerService } from './invite-mailer.service';
import { InviteController } from './invite.controller';
import { InviteRepository } from './invite.repository';
import { InviteService } from './invite.service';

@Module({
  imports: [OrganizationsModule],
  controllers: [InviteController],
  providers: [InviteService, InviteMailerService, InviteRepository],
  exports: [InviteService],
})
export class InvitesModule {}
