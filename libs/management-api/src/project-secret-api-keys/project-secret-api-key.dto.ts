import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsDefined, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { DrfCharField, RejectNull } from '../common/drf-fields.util';
import { messages } from '../common/messages';

export const LABEL_MAX_LENGTH = 40;

export class CreateProjectSecretApiKeyDto {
  @ApiProperty({ maxLength: LABEL_MAX_LENGTH })
  @IsDefined({ message: messages.required })
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(LABEL_MAX_LENGTH, { message: messages.maxLength(LABEL_MAX_LENGTH) })
  label!: string;

  @ApiProperty({ type: [String], example: ['feature_flag:read'] })
  @IsDefined({ message: messages.required })
  @RejectNull()
  @IsArray({ message: 'Expected a list of items.' })
  @IsString({ each: true, message: messages.string })
  scopes!: string[];
}

export class UpdateProjectSecretApiKeyDto {
  @ApiPropertyOptional({ maxLength: LABEL_MAX_LENGTH })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(LABEL_MAX_LENGTH, { message: messages.maxLength(LABEL_MAX_LENGTH) })
  label?: string;

  @ApiPropertyOptional({ type: [String], example: ['feature_flag:read'] })
  @IsOptional()
  @RejectNull()
  @IsArray({ message: 'Expected a list of items.' })
  @IsString({ each: true, message: messages.string })
  scopes?: string[];
}
