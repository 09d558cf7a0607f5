import { Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module';
import { MemberController } from './member.controller';
import { MemberService } from './member.service';

/** The membership repository comes from OrganizationsModule (see there why). */
@Module({ imports: [OrganizationsModule], controllers: [MemberController], providers: [MemberService] })
export class MembersModule {}
