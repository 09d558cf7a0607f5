import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiModel, DATE_TIME } from '../schema/api-responses.decorator';

/** PostHog's QueryStatus: an async query's progress and, once complete, its results. */
@ApiModel('QueryStatus')
export class QueryStatusResponse {
  @ApiProperty({ description: 'The client_query_id, or one made for the query' })
  id!: string;

  @ApiProperty()
  team_id!: number;

  @ApiProperty({ enum: [true] })
  query_async!: true;

  @ApiProperty()
  complete!: boolean;

  @ApiProperty()
  error!: boolean;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it failed, when the query itself was at fault',
  })
  error_message!: string | null;

  @ApiProperty({ type: 'array', items: {}, nullable: true, description: 'The rows, once complete' })
  results!: unknown;

  @ApiProperty(DATE_TIME)
  start_time!: string;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  end_time!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  pickup_time!: string | null;

  @ApiProperty({ ...DATE_TIME, nullable: true })
  expiration_time!: string | null;

  @ApiProperty({ type: String, nullable: true })
  task_id!: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  query_progress!: null;

  @ApiProperty({ type: [String], nullable: true })
  labels!: null;

  @ApiProperty({ type: Number, nullable: true })
  dashboard_id!: null;

  @ApiProperty({ type: Number, nullable: true })
  insight_id!: null;
}

@ApiModel('QueryStatusResponse')
export class QueryStatusEnvelope {
  @ApiProperty({ type: () => QueryStatusResponse })
  query_status!: QueryStatusResponse;
}

/** An async query with nothing cached yet: poll GET …/query/:id/ with `query_status.id`. */
@ApiModel('CacheMissResponse')
export class QueryCacheMissResponse {
  @ApiProperty()
  cache_key!: string;

  @ApiProperty({ type: () => QueryStatusResponse })
  query_status!: QueryStatusResponse;

  @ApiProperty({ enum: [false] })
  is_cached!: false;

  @ApiProperty()
  timezone!: string;
}

export class QueryCancelResponse {
  @ApiProperty()
  message!: string;
}

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

  @ApiProperty({
    type: () => QueryStatusResponse,
    nullable: true,
    description: 'Null, or the refresh an async request started beside a cached answer',
  })
  query_status!: QueryStatusResponse | null;
}
