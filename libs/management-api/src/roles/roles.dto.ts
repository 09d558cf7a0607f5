import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { ResourceAccessLevel } from '@hogbase/postgres';
import { DrfCharField, RejectNull } from '../common/drf-fields.util';
import { messages } from '../common/messages.constants';

const LEVELS = [ResourceAccessLevel.CanOnlyView, ResourceAccessLevel.CanAlwaysEdit];

export class CreateRoleDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @IsDefined({ message: messages.required })
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name!: string;

  @ApiPropertyOptional({
    type: 'integer',
    enum: LEVELS,
    description: '21: can only view flags; 37: can always edit them',
  })
  @IsOptional()
  @RejectNull()
  @IsIn(LEVELS, { message: (args) => messages.choice(args.value) })
  feature_flags_access_level?: ResourceAccessLevel;
}

export class UpdateRoleDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name?: string;

  @ApiPropertyOptional({ type: 'integer', enum: LEVELS })
  @IsOptional()
  @RejectNull()
  @IsIn(LEVELS, { message: (args) => messages.choice(args.value) })
  feature_flags_access_level?: ResourceAccessLevel;
}

export class CreateRoleMembershipDto {
  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: messages.required })
  @RejectNull()
  @IsString({ message: messages.string })
  user_uuid!: string;
}

export class CreateRoleAccessDto {
  @ApiProperty({ format: 'uuid' })
  @IsDefined({ message: messages.required })
  @RejectNull()
  @IsString({ message: messages.string })
  role_id!: string;
}
