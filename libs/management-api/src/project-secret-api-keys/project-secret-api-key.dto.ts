import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsArray, IsDefined, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { DrfCharField, RejectNull } from '../common/drf-fields.util';
import { messages } from '../common/messages.constants';
import { PROJECT_SECRET_API_KEY_SCOPES } from './project-secret-api-key.service';

export const LABEL_MAX_LENGTH = 40;

/** What the service accepts (assertAssignableScopes): a non-empty list of the assignable scopes. */
const SCOPES: ApiPropertyOptions = {
  type: [String],
  enum: [...PROJECT_SECRET_API_KEY_SCOPES],
  minItems: 1,
  example: ['feature_flag:read'],
};

export class CreateProjectSecretApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: LABEL_MAX_LENGTH })
  @IsDefined({ message: messages.required })
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(LABEL_MAX_LENGTH, { message: messages.maxLength(LABEL_MAX_LENGTH) })
  label!: string;

  @ApiProperty(SCOPES)
  @IsDefined({ message: messages.required })
  @RejectNull()
  @IsArray({ message: 'Expected a list of items.' })
  @IsString({ each: true, message: messages.string })
  scopes!: string[];
}

export class UpdateProjectSecretApiKeyDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: LABEL_MAX_LENGTH })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(LABEL_MAX_LENGTH, { message: messages.maxLength(LABEL_MAX_LENGTH) })
  label?: string;

  @ApiPropertyOptional(SCOPES)
  @IsOptional()
  @RejectNull()
  @IsArray({ message: 'Expected a list of items.' })
  @IsString({ each: true, message: messages.string })
  scopes?: string[];
}
