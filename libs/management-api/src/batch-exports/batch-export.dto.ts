import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  Allow,
  IsBoolean,
  IsDateString,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { DrfBooleanField, DrfCharField, RejectNull } from '../common/drf-fields.util';
import { messages } from '../common/messages.constants';
import { ANY_JSON } from '../schema/api-responses.decorator';
import { SUPPORTED_DESTINATIONS } from './batch-export-destinations.validator';

export const BATCH_EXPORT_MODELS = ['events', 'persons'] as const;
export const BATCH_EXPORT_INTERVALS = ['hour', 'day', 'week', 'every 5 minutes'] as const;
export type BatchExportInterval = (typeof BATCH_EXPORT_INTERVALS)[number];

const DATETIME =
  'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].';

export class BatchExportDestinationDto {
  @ApiProperty({ enum: SUPPORTED_DESTINATIONS })
  @IsDefined({ message: messages.required })
  @DrfCharField()
  @IsString({ message: messages.string })
  type!: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: "The destination's settings (S3: bucket_name, region, prefix, keys…; checked per type)",
  })
  @IsOptional()
  @RejectNull()
  @IsObject({ message: 'Expected a dictionary of items.' })
  config?: Record<string, unknown>;
}

class BatchExportFieldsDto {
  @ApiPropertyOptional({
    type: String,
    enum: BATCH_EXPORT_MODELS,
    default: 'events',
    nullable: true,
    description: 'events by default (null too)',
  })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsIn(BATCH_EXPORT_MODELS, { message: (args) => messages.choice(args.value) })
  model?: (typeof BATCH_EXPORT_MODELS)[number] | null;

  @ApiPropertyOptional()
  @IsOptional()
  @DrfBooleanField()
  @IsBoolean({ message: messages.boolean })
  paused?: boolean;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When it was last paused: set by pausing, or stored as given (as PostHog)',
  })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsDateString({ strict: true }, { message: DATETIME })
  last_paused_at?: string | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsDateString({ strict: true }, { message: DATETIME })
  start_at?: string | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsDateString({ strict: true }, { message: DATETIME })
  end_at?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 65_536,
    description: 'One SELECT from events: the exported columns',
  })
  @IsOptional()
  @ValidateIf((_dto, value) => value !== null)
  @IsString({ message: messages.string })
  @MaxLength(65_536, { message: messages.maxLength(65_536) })
  hogql_query?: string | null;

  @ApiPropertyOptional({ ...ANY_JSON, description: 'Stored as given' })
  @IsOptional()
  filters?: unknown;
}

export class CreateBatchExportDto extends BatchExportFieldsDto {
  @ApiProperty({ minLength: 1, maxLength: 65_536 })
  @IsDefined({ message: messages.required })
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(65_536, { message: messages.maxLength(65_536) })
  name!: string;

  @ApiProperty({ type: BatchExportDestinationDto })
  @IsDefined({ message: messages.required })
  @RejectNull()
  @IsObject({ message: 'Invalid data. Expected a dictionary.' })
  @ValidateNested()
  @Type(() => BatchExportDestinationDto)
  destination!: BatchExportDestinationDto;

  @ApiProperty({ enum: BATCH_EXPORT_INTERVALS })
  @IsDefined({ message: messages.required })
  @IsIn(BATCH_EXPORT_INTERVALS, { message: (args) => messages.choice(args.value) })
  interval!: BatchExportInterval;

  @ApiPropertyOptional({
    type: 'integer',
    description:
      "The project the export reads (on the organization's routes): the organization's only project when omitted",
  })
  @IsOptional()
  @RejectNull()
  @IsInt({ message: messages.integer })
  team_id?: number;
}

export class UpdateBatchExportDto extends BatchExportFieldsDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 65_536 })
  @IsOptional()
  @DrfCharField()
  @IsString({ message: messages.string })
  @IsNotEmpty({ message: messages.blank })
  @MaxLength(65_536, { message: messages.maxLength(65_536) })
  name?: string;

  @ApiPropertyOptional({ type: BatchExportDestinationDto })
  @IsOptional()
  @RejectNull()
  @IsObject({ message: 'Invalid data. Expected a dictionary.' })
  @ValidateNested()
  @Type(() => BatchExportDestinationDto)
  destination?: BatchExportDestinationDto;

  @ApiPropertyOptional({ enum: BATCH_EXPORT_INTERVALS })
  @IsOptional()
  @IsIn(BATCH_EXPORT_INTERVALS, { message: (args) => messages.choice(args.value) })
  interval?: BatchExportInterval;
}

export class UnpauseBatchExportDto {
  @ApiPropertyOptional({ description: 'Backfill the intervals skipped while paused' })
  @IsOptional()
  @DrfBooleanField()
  @IsBoolean({ message: messages.boolean })
  backfill?: boolean;
}

/** `?cursor=` of the runs: the previous page's position; absent, empty or repeated, the first page. */
export class RunPageQueryDto {
  @Allow()
  @Transform(({ value }) => (typeof value === 'string' && value !== '' ? value : undefined))
  cursor?: string;
}
