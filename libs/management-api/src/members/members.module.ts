import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { MemberController } from './member.controller';
import { MemberService } from './member.service';

/** The membership repository comes from AuthModule (see there why). */
@Module({ imports: [AuthModule], controllers: [MemberController], providers: [MemberService] })
export class MembersModule {}
