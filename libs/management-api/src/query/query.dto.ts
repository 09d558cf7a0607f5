import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  Allow,
  IsBoolean,
  IsDefined,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import { messages } from '../common/messages.constants';

/** PostHog's `refresh` (posthog/hogql_queries/query_runner.py, execution_mode_from_refresh). */
export const REFRESH_MODES = [
  'async',
  'async_except_on_cache_miss',
  'blocking',
  'force_async',
  'force_blocking',
  'force_cache',
  'lazy_async',
] as const;

/** PostHog's QueryRequest. `query` is checked by kind in the service, as its schema is a union. */
export class QueryRequestDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The query: {kind: "HogQLQuery", query: "select …", values?: {…}}',
    example: { kind: 'HogQLQuery', query: 'select event, count() from events group by event' },
  })
  @IsDefined({ message: messages.required })
  @IsObject({ message: 'Expected a dictionary of items.' })
  query!: Record<string, unknown>;

  @ApiPropertyOptional({ enum: [...REFRESH_MODES, true, false] })
  @IsOptional()
  @IsIn([...REFRESH_MODES, true, false], { message: 'Not a valid choice of refresh.' })
  refresh?: (typeof REFRESH_MODES)[number] | boolean;

  @ApiPropertyOptional({ description: 'An id of the caller for this query, echoed as the query status id' })
  @IsOptional()
  @IsString({ message: messages.string })
  @MaxLength(200, { message: messages.maxLength(200) })
  client_query_id?: string;

  @ApiPropertyOptional({ description: 'A name for the query, for logs' })
  @IsOptional()
  @IsString({ message: messages.string })
  @MaxLength(200, { message: messages.maxLength(200) })
  name?: string;

  @ApiPropertyOptional({ description: 'Legacy: prefer refresh "async"' })
  @IsOptional()
  @IsBoolean({ message: 'Must be a valid boolean.' })
  async?: boolean;

  /** Dashboards' overrides: accepted when empty, refused otherwise (no dashboards here yet). */
  @Allow() filters_override?: unknown;
  @Allow() variables_override?: unknown;
}
