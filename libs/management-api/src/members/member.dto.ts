import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Allow, IsIn, IsOptional } from 'class-validator';
import { MEMBERSHIP_LEVELS, MembershipLevel } from '@hogbase/postgres';
import { messages } from '../common/messages.constants';
import { RejectNull } from '../common/drf-fields.util';
import { PageQueryDto } from '../common/page-query.dto';

/** DRF's ChoiceField matches the choice's string form, so `"8"` is level 8 as PostHog reads it. */
const levelFromString = ({ value }: { value: unknown }) =>
  typeof value === 'string' && MEMBERSHIP_LEVELS.map(String).includes(value) ? Number(value) : value;

/** A PATCH is partial, as in PostHog: without `level` nothing changes. */
export class UpdateMemberDto {
  @ApiPropertyOptional({
    type: 'integer',
    enum: MEMBERSHIP_LEVELS,
    description: '1 member, 8 admin, 15 owner',
  })
  @Transform(levelFromString)
  @RejectNull()
  @IsOptional()
  @IsIn(MEMBERSHIP_LEVELS, { message: (args) => messages.choice(args.value) })
  level?: MembershipLevel;
}

/** `GET members/?email=`: only the member with that e-mail (case-insensitive); a repeated one is ignored. */
export class MemberListQueryDto extends PageQueryDto {
  @Allow()
  @Transform(({ value }) => (typeof value === 'string' ? value : undefined))
  email?: string;
}
