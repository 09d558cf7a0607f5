import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsDefined,
  IsNotEmpty,
  IsOptional,
  isTimeZone,
  IsString,
  MaxLength,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { messages } from '../common/messages.constants';
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

/** The web vitals posthog-js can report (`autocapture_web_vitals_allowed_metrics`). */
export const WEB_VITALS_METRICS = ['FCP', 'LCP', 'INP', 'CLS'] as const;

/** An optional boolean setting, with DRF's parsing and messages. */
function BooleanSetting(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ description }),
    DrfBooleanField(),
    IsOptional(),
    IsBoolean({ message: messages.boolean }),
  );
}

/**
 * The project settings the SDKs' remote config is built from (`/array/:token/config`, `/flags?config=true`,
 * `/decide`), with PostHog's names. A change reaches SDKs on their next load: capture is notified.
 */
export class ProjectSdkSettingsDto {
  @BooleanSetting("Lets posthog-js load the project's enabled site apps")
  inject_web_apps?: boolean;

  @BooleanSetting('Turns posthog-js autocapture (clicks, changes, submits) off')
  autocapture_opt_out?: boolean;

  @BooleanSetting('Lets posthog-js capture uncaught errors as `$exception` events')
  autocapture_exceptions_opt_in?: boolean;

  @BooleanSetting('Lets posthog-js send `$web_vitals` events')
  autocapture_web_vitals_opt_in?: boolean;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...WEB_VITALS_METRICS] },
    maxItems: WEB_VITALS_METRICS.length,
    nullable: true,
  })
  @IsOptional()
  @IsArray({ message: 'Expected a list of items.' })
  @ArrayMaxSize(WEB_VITALS_METRICS.length)
  @IsIn(WEB_VITALS_METRICS, {
    each: true,
    // With `each`, the message is given the whole list: name the first item refused.
    message: (args) =>
      messages.choice(
        ([] as unknown[])
          .concat(args.value)
          .find((item) => !(WEB_VITALS_METRICS as readonly unknown[]).includes(item)),
      ),
  })
  autocapture_web_vitals_allowed_metrics?: string[] | null;

  @BooleanSetting('Network timing in session recordings (kept for PostHog parity: no recordings here)')
  capture_performance_opt_in?: boolean;

  @BooleanSetting('Console logs in session recordings (kept for PostHog parity: no recordings here)')
  capture_console_log_opt_in?: boolean;

  @BooleanSetting('Lets posthog-js send `$dead_click` events')
  capture_dead_clicks?: boolean;

  @BooleanSetting('Lets posthog-js send heatmap data with its events')
  heatmaps_opt_in?: boolean;
}

export class CreateProjectDto extends ProjectSdkSettingsDto {
  @ApiProperty({ minLength: 1, maxLength: 200 })
  @DrfCharField()
  @IsDefined({ message: messages.required })
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name!: string;

  @ApiPropertyOptional({ example: 'UTC', description: 'An IANA time zone' })
  @RejectNull()
  @IsOptional()
  @IsTimeZoneChoice()
  timezone?: string;

  @ApiPropertyOptional({ type: [String], maxItems: 100 })
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

export class UpdateProjectDto extends ProjectSdkSettingsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @DrfCharField()
  @ValidateIf((_dto, value) => value !== undefined)
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name?: string;

  @ApiPropertyOptional({ example: 'UTC', description: 'An IANA time zone' })
  @RejectNull()
  @IsOptional()
  @IsTimeZoneChoice()
  timezone?: string;

  @ApiPropertyOptional({ type: [String], maxItems: 100 })
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

  @ApiPropertyOptional()
  @DrfBooleanField()
  @IsOptional()
  @IsBoolean({ message: messages.boolean })
  completed_snippet_onboarding?: boolean;
}
