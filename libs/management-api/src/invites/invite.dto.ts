import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsEmail,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { MEMBERSHIP_LEVELS, MembershipLevel } from '@hogbase/postgres';
import { messages } from '../common/messages.constants';

export class CreateInviteDto {
  @ApiProperty({ format: 'email', maxLength: 254 })
  @IsDefined({ message: messages.required })
  @IsString({ message: messages.string })
  @MaxLength(254, { message: messages.maxLength(254) })
  @IsEmail({}, { message: messages.email })
  target_email!: string;

  @ApiPropertyOptional({ maxLength: 30 })
  @IsOptional()
  @IsString({ message: messages.string })
  @MaxLength(30, { message: messages.maxLength(30) })
  first_name?: string;

  @ApiPropertyOptional({ type: 'integer', enum: MEMBERSHIP_LEVELS, default: MembershipLevel.Member })
  @IsOptional()
  @IsIn(MEMBERSHIP_LEVELS, { message: (args) => messages.choice(args.value) })
  level?: MembershipLevel;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 10_000 })
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsString({ message: messages.string })
  @MaxLength(10_000, { message: messages.maxLength(10_000) })
  message?: string | null;

  @ApiPropertyOptional({
    default: true,
    description: 'write-only: send the invite e-mail when SMTP is configured',
  })
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  send_email?: boolean;
}
