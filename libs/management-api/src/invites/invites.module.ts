import { Module } from '@nestjs/common';
import { InviteMailerService } from './invite-mailer.service';
import { InviteController } from './invite.controller';
import { InviteService } from './invite.service';

@Module({
  controllers: [InviteController],
  providers: [InviteService, InviteMailerService],
  exports: [InviteService],
})
export class InvitesModule {}
