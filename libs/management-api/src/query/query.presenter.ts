import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiModel, DATE_TIME } from '../schema/api-responses.decorator';

export class QueryTimingResponse {
  @ApiProperty({ description: 'What was timed' })
  k!: string;

  @ApiProperty({ description: 'Seconds' })
  t!: number;
}

/** PostHog's CachedHogQLQueryResponse (frontend/src/queries/schema/schema-general.ts). */
@ApiModel('HogQLQueryResponse')
export class HogQLQueryResponse {
  @ApiProperty({ type: 'array', items: { type: 'array', items: {} }, description: 'One array per row' })
  results!: unknown[][];

  @ApiProperty({ type: [String], description: 'The name of each column: its alias, else the expression' })
  columns!: string[];

  @ApiProperty({
    type: 'array',
    items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 },
    description: "Each column's name and ClickHouse type",
  })
  types!: [string, string][];

  @ApiProperty({ description: 'Whether rows past this page exist' })
  hasMore!: boolean;

  @ApiProperty()
  limit!: number;

  @ApiProperty()
  offset!: number;

  @ApiProperty({ description: 'The query as sent' })
  query!: string;

  @ApiProperty({ description: 'The HogQL that ran' })
  hogql!: string;

  @ApiProperty({ description: 'The ClickHouse SQL that ran; values travel as bound parameters' })
  clickhouse!: string;

  @ApiProperty({ type: [QueryTimingResponse] })
  timings!: QueryTimingResponse[];

  @ApiProperty({ type: 'object', additionalProperties: true })
  modifiers!: Record<string, unknown>;

  @ApiPropertyOptional({ type: String, nullable: true })
  error!: string | null;

  @ApiProperty({ description: 'False: this answer was computed for this request' })
  is_cached!: boolean;

  @ApiProperty(DATE_TIME)
  last_refresh!: string;

  @ApiProperty({ description: 'Identifies the project and the normalised query' })
  cache_key!: string;

  @ApiProperty({ description: "The project's time zone" })
  timezone!: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'Null: the query ran to completion',
  })
  query_status!: null;
}
