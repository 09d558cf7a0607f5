import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { PLUGIN_TYPES, type PluginType } from '@hogbase/postgres';
import { DrfBooleanField, DrfCharField, RejectNull } from '../common/drf-fields.util';
import { messages } from '../common/messages.constants';
import {
  capabilitiesProblem,
  configSchemaProblem,
  metricsProblem,
  publicJobsProblem,
  ValidShape,
} from './plugin-fields.validator';

const MAX_TEXT = 65_536;
/** `plugin_configs.order` is a Postgres integer. */
const MAX_ORDER = 2_147_483_647;

/** The writable fields of a pipeline app (the spec's body), shared by create and update. */
class PipelineAppFieldsDto {
  @ApiPropertyOptional({ type: String, enum: PLUGIN_TYPES, nullable: true })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsIn(PLUGIN_TYPES, { message: (args) => messages.choice(args.value) })
  plugin_type?: PluginType | null;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200 })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(200, { message: messages.maxLength(200) })
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MAX_TEXT })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsString({ message: messages.string })
  @MaxLength(MAX_TEXT, { message: messages.maxLength(MAX_TEXT) })
  description?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 800 })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsString({ message: messages.string })
  @MaxLength(800, { message: messages.maxLength(800) })
  icon?: string | null;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: "plugin.json's `config`: fields with key, name, type (string, attachment, choice, json), …",
  })
  @IsOptional()
  @RejectNull()
  @ValidShape('configSchema', configSchemaProblem)
  config_schema?: Record<string, unknown>[];

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 200 })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsString({ message: messages.string })
  @MaxLength(200, { message: messages.maxLength(200) })
  tag?: string | null;

  @ApiPropertyOptional()
  @IsOptional()
  @DrfBooleanField()
  @IsBoolean({ message: messages.boolean })
  is_global?: boolean;

  /** SECURITY: descriptive only: shown until the code is inspected, never what the runtime calls. */
  @ApiPropertyOptional({
    type: 'object',
    properties: {
      methods: { type: 'array', items: { type: 'string' } },
      jobs: { type: 'array', items: { type: 'string' } },
      scheduled_tasks: { type: 'array', items: { type: 'string' } },
    },
    additionalProperties: false,
    description: "What the app does, shown until its code is inspected (then the code's)",
  })
  @IsOptional()
  @RejectNull()
  @ValidShape('capabilities', capabilitiesProblem)
  capabilities?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', enum: ['sum', 'max', 'min'] },
    description: "The app's metrics, shown until its code is inspected (then the code's `metrics` export)",
  })
  @IsOptional()
  @RejectNull()
  @ValidShape('metrics', metricsProblem)
  metrics?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'object', additionalProperties: true },
    description: "plugin.json's `publicJobs`: job name → its payload's fields",
  })
  @IsOptional()
  @RejectNull()
  @ValidShape('publicJobs', publicJobsProblem)
  public_jobs?: Record<string, unknown>;
}

/** The spec's writable fields of an app: update_source takes them as well as a map of files. */
export const PIPELINE_APP_FIELDS: readonly string[] = [
  'plugin_type',
  'name',
  'description',
  'icon',
  'config_schema',
  'tag',
  'is_global',
  'capabilities',
  'metrics',
  'public_jobs',
];

export class CreatePipelineAppDto extends PipelineAppFieldsDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 800,
    description:
      'Where the app comes from: file:<folder> (local), an archive, GitHub, GitLab or npm URL (custom, repository)',
  })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(800, { message: messages.maxLength(800) })
  url?: string;
}

export class UpdatePipelineAppDto extends PipelineAppFieldsDto {}

/** `upgrade/` takes the writable body and ignores it, as PostHog does: the new version comes from the URL. */
export class UpgradePipelineAppDto extends PipelineAppFieldsDto {}

/** The writable fields of a config, shared by create and update. */
class PluginConfigFieldsDto {
  @ApiPropertyOptional()
  @IsOptional()
  @DrfBooleanField()
  @IsBoolean({ message: messages.boolean })
  enabled?: boolean;

  @ApiPropertyOptional({ type: 'integer', minimum: -MAX_ORDER, maximum: MAX_ORDER })
  @IsOptional()
  @RejectNull()
  @IsInt({ message: messages.integer })
  @Min(-MAX_ORDER, { message: `Ensure this value is greater than or equal to ${-MAX_ORDER}.` })
  @Max(MAX_ORDER, { message: `Ensure this value is less than or equal to ${MAX_ORDER}.` })
  order?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      "Values of the app's config_schema fields; a secret one sent back masked keeps its stored value",
  })
  @IsOptional()
  @RejectNull()
  @IsObject({ message: 'Expected a dictionary of items.' })
  config?: Record<string, unknown>;
}

export class CreatePluginConfigDto extends PluginConfigFieldsDto {
  @ApiProperty({ type: 'integer', description: 'The id of an app the organization can see' })
  @IsDefined({ message: messages.required })
  @RejectNull()
  @IsInt({ message: messages.integer })
  plugin!: number;
}

export class UpdatePluginConfigDto extends PluginConfigFieldsDto {
  @ApiPropertyOptional({ description: 'true deletes the config (and disables it)' })
  @IsOptional()
  @DrfBooleanField()
  @IsBoolean({ message: messages.boolean })
  deleted?: boolean;
}

/** `upgrade/` of a config takes the writable body and ignores it, as an app's `upgrade/` does. */
export class UpgradePluginConfigDto extends PluginConfigFieldsDto {}
