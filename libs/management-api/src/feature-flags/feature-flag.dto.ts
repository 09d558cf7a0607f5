import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsArray,
  IsBoolean,
  IsDateString,
  IsDefined,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
} from 'class-validator';
import { DrfBooleanField, DrfCharField, RejectNull } from '../common/drf-fields.util';
import { messages } from '../common/messages.constants';
import { ANY_JSON, FREE_FORM_OBJECT } from '../schema/api-responses.decorator';

/** PostHog 2025's key rule (checked by the service: its code is `invalid_key`). */
export const FLAG_KEY_PATTERN = /^[a-zA-Z0-9_-]+$/;
export const FLAG_KEY_MESSAGE = 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.';

class FeatureFlagFieldsDto {
  @ApiPropertyOptional({ description: "The flag's description" })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  name?: string;

  @ApiPropertyOptional({
    ...FREE_FORM_OBJECT,
    description:
      '{groups: [{properties, rollout_percentage, variant}], multivariate, payloads, aggregation_group_type_index}',
  })
  @IsOptional()
  @RejectNull()
  @IsObject({ message: 'Expected a dictionary of items.' })
  filters?: Record<string, unknown>;

  @ApiPropertyOptional()
  @IsOptional()
  @DrfBooleanField()
  @IsBoolean({ message: messages.boolean })
  deleted?: boolean;

  @ApiPropertyOptional()
  @IsOptional()
  @DrfBooleanField()
  @IsBoolean({ message: messages.boolean })
  active?: boolean;

  @ApiPropertyOptional({ type: Boolean, nullable: true })
  @IsOptional()
  @DrfBooleanField({ allowNull: true })
  @ValidateIf((_dto, value) => value !== null)
  @IsBoolean({ message: messages.boolean })
  ensure_experience_continuity?: boolean | null;

  @ApiPropertyOptional({ ...ANY_JSON, description: 'Stored as given' })
  @IsOptional()
  rollback_conditions?: unknown;

  @ApiPropertyOptional({ type: Boolean, nullable: true })
  @IsOptional()
  @DrfBooleanField({ allowNull: true })
  @ValidateIf((_dto, value) => value !== null)
  @IsBoolean({ message: messages.boolean })
  performed_rollback?: boolean | null;

  @ApiPropertyOptional({ type: 'array', items: { type: 'string', maxLength: 255 } })
  @IsOptional()
  @RejectNull()
  @IsArray({ message: 'Expected a list of items.' })
  @IsString({ each: true, message: messages.string })
  @MaxLength(255, { each: true, message: messages.maxLength(255) })
  tags?: string[];

  @ApiPropertyOptional({ type: 'integer', isArray: true })
  @IsOptional()
  @RejectNull()
  @IsArray({ message: 'Expected a list of items.' })
  @IsInt({ each: true, message: messages.integer })
  analytics_dashboards?: number[];

  @ApiPropertyOptional({ type: Boolean, nullable: true })
  @IsOptional()
  @DrfBooleanField({ allowNull: true })
  @ValidateIf((_dto, value) => value !== null)
  @IsBoolean({ message: messages.boolean })
  has_enriched_analytics?: boolean | null;

  @ApiPropertyOptional({ type: String, format: 'date-time' })
  @IsOptional()
  @RejectNull()
  @IsDateString({}, { message: 'Datetime has wrong format.' })
  created_at?: string;
}

export class CreateFeatureFlagDto extends FeatureFlagFieldsDto {
  @ApiProperty({ minLength: 1, maxLength: 400, pattern: FLAG_KEY_PATTERN.source })
  @IsDefined({ message: messages.required })
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(400, { message: messages.maxLength(400) })
  key!: string;
}

export class UpdateFeatureFlagDto extends FeatureFlagFieldsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 400, pattern: FLAG_KEY_PATTERN.source })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(400, { message: messages.maxLength(400) })
  key?: string;
}
