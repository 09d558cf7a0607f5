import { Allow } from 'class-validator';

/** Kept as they came: parseEventListRequest reads them in a fixed order, so the same bad one is named. */
export class EventListQueryDto {
  @Allow() after?: unknown;
  @Allow() before?: unknown;
  @Allow() distinct_id?: unknown;
  @Allow() event?: unknown;
  @Allow() person_id?: unknown;
  @Allow() properties?: unknown;
  @Allow() select?: unknown;
  @Allow() where?: unknown;
  @Allow() orderBy?: unknown;
  @Allow() limit?: unknown;
  @Allow() offset?: unknown;
  /** Where the previous page ended: set in the `next` link, not by callers. */
  @Allow() cursor?: unknown;
}

export class EventValuesQueryDto {
  @Allow() key?: unknown;
  @Allow() value?: unknown;
  @Allow() event_name?: unknown;
  @Allow() is_column?: unknown;
}
