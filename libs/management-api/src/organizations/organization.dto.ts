import { ApiPropertyOptional, ApiProperty } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { messages } from '../common/messages.constants';
import { DrfBooleanField, DrfCharField } from '../common/drf-fields.util';

export class CreateOrganizationDto {
  @ApiProperty({ minLength: 1, maxLength: 64 })
  @DrfCharField()
  @IsDefined({ message: messages.required })
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(64, { message: messages.maxLength(64) })
  name!: string;

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  is_member_join_email_enabled?: boolean;

  @ApiPropertyOptional({ nullable: true, type: Boolean })
  @DrfBooleanField({ allowNull: true })
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsBoolean({ message: messages.boolean })
  enforce_2fa?: boolean | null;
}

export class UpdateOrganizationDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 64 })
  @DrfCharField()
  @ValidateIf((_dto, value) => value !== undefined)
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(64, { message: messages.maxLength(64) })
  name?: string;

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  is_member_join_email_enabled?: boolean;

  @ApiPropertyOptional({ nullable: true, type: Boolean })
  @DrfBooleanField({ allowNull: true })
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @IsBoolean({ message: messages.boolean })
  enforce_2fa?: boolean | null;
}
