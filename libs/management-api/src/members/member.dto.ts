import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsIn } from 'class-validator';
import { MEMBERSHIP_LEVELS, MembershipLevel } from '@hogbase/postgres';
import { messages } from '../common/messages';

export class UpdateMemberDto {
  @ApiProperty({ enum: MEMBERSHIP_LEVELS, description: '1 member, 8 admin, 15 owner' })
  @IsDefined({ message: messages.required })
  @IsIn(MEMBERSHIP_LEVELS, { message: (args) => messages.choice(args.value) })
  level!: MembershipLevel;
}
