import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { ApiModel, DATE_TIME, FREE_FORM_OBJECT } from '../schema/api-responses.decorator';

/** The page size of an activity log without `?limit=`, and the largest one it serves. */
export const ACTIVITY_PAGE_SIZE = 10;
export const MAX_ACTIVITY_PAGE_SIZE = 1_000;

/** Keeps (page - 1) * limit within a Postgres integer at the largest page size. */
export const MAX_ACTIVITY_PAGE = 2_000_000;

/** Who made a change: the user, or PostHog's system marker for changes no user made. */
@ApiModel('ActivityLogUser')
export class ActivityUserResponse {
  @ApiProperty()
  first_name!: string;

  @ApiProperty({ type: String, nullable: true })
  email!: string | null;

  @ApiPropertyOptional({ description: 'Present (true) only for a change no user made' })
  is_system?: boolean;
}

/** One change to an item, as PostHog's activity log shows it. */
@ApiModel('ActivityLog')
export class ActivityItemResponse {
  @ApiProperty({ type: () => ActivityUserResponse })
  user!: ActivityUserResponse;

  @ApiProperty({ description: 'What happened: created, updated, deleted…' })
  activity!: string;

  @ApiProperty({ description: 'The kind of item: FeatureFlag, Plugin, PluginConfig…' })
  scope!: string;

  @ApiProperty({ type: String, nullable: true })
  item_id!: string | null;

  @ApiProperty({
    ...FREE_FORM_OBJECT,
    description:
      '{id, changes, merge, trigger, name, short_id, type}: `changes` lists each field before and after',
  })
  detail!: Record<string, unknown>;

  @ApiProperty(DATE_TIME)
  created_at!: string;
}

/** PostHog's activity log page: numbered pages with absolute links and the total. */
@ApiModel('ActivityLogPage')
export class ActivityPage {
  @ApiProperty({ type: () => ActivityItemResponse, isArray: true })
  results!: ActivityItemResponse[];

  @ApiProperty({ type: String, format: 'uri', nullable: true })
  next!: string | null;

  @ApiProperty({ type: String, format: 'uri', nullable: true })
  previous!: string | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  total_count!: number;
}

export function ApiActivityPage(description = 'One page of changes, newest first'): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'page',
      required: false,
      type: 'integer',
      minimum: 1,
      maximum: MAX_ACTIVITY_PAGE,
      description: 'The page (1 by default); anything else but an integer in range is a 400',
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      type: 'integer',
      minimum: 1,
      description: `Changes per page (${ACTIVITY_PAGE_SIZE} by default, at most ${MAX_ACTIVITY_PAGE_SIZE}; a value that is not a positive integer means the default)`,
    }),
    ApiResponse({ status: HttpStatus.OK, description, type: ActivityPage }),
  );
}
