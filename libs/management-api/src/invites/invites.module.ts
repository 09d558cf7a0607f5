import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { ProjectsModule } from '../projects/projects.module';
import { InviteMailerService } from './invite-mailer.service';
import { InviteController } from './invite.controller';
import { InviteRepository } from './invite.repository';
import { InviteService } from './invite.service';

@Module({
  imports: [AuthModule, ProjectsModule],
  controllers: [InviteController],
  providers: [InviteService, InviteMailerService, InviteRepository],
  exports: [InviteService],
})
export class InvitesModule {}
