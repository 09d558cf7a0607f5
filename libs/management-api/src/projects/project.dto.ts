import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsNotEmpty,
  IsOptional,
  isTimeZone,
  IsString,
  MaxLength,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { messages } from '../common/messages';
import { DrfBooleanField, DrfCharField, RejectNull } from '../common/drf-fields.util';

/**
 * PostHog's timezone is a choice field over the IANA zones, so any other value (a number too) is
 * `"<value>" is not a valid choice.`; the constraint is named `isIn` for DRF's `invalid_choice` code.
 */
function IsTimeZoneChoice(): PropertyDecorator {
  return ValidateBy(
    { name: 'isIn', validator: { validate: (value: unknown) => isTimeZone(value) } },
    { message: (args) => messages.choice(args.value) },
  );
}

export class CreateProjectDto {
  @ApiProperty({ maxLength: 200 })
  @DrfCharField()
  @IsDefined({ message: messages.required })
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name!: string;

  @ApiPropertyOptional({ example: 'UTC' })
  @RejectNull()
  @IsOptional()
  @IsTimeZoneChoice()
  timezone?: string;

  @ApiPropertyOptional({ type: [String] })
  @RejectNull()
  @IsOptional()
  @IsArray({ message: 'Expected a list of items.' })
  @ArrayMaxSize(100)
  @IsString({ each: true, message: messages.string })
  app_urls?: string[];

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  anonymize_ips?: boolean;

  @ApiPropertyOptional({ description: "Lets posthog-js load the project's enabled site apps" })
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  inject_web_apps?: boolean;

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  is_demo?: boolean;

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  completed_snippet_onboarding?: boolean;
}

export class UpdateProjectDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @DrfCharField()
  @ValidateIf((_dto, value) => value !== undefined)
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name?: string;

  @ApiPropertyOptional({ example: 'UTC' })
  @RejectNull()
  @IsOptional()
  @IsTimeZoneChoice()
  timezone?: string;

  @ApiPropertyOptional({ type: [String] })
  @RejectNull()
  @IsOptional()
  @IsArray({ message: 'Expected a list of items.' })
  @ArrayMaxSize(100)
  @IsString({ each: true, message: messages.string })
  app_urls?: string[];

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  anonymize_ips?: boolean;

  @ApiPropertyOptional({ description: "Lets posthog-js load the project's enabled site apps" })
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  inject_web_apps?: boolean;

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  completed_snippet_onboarding?: boolean;
}
