import { Allow } from 'class-validator';

/**
 * The listing's query parameters as they came: a string, or an array when a parameter repeats.
 * parseEventListRequest reads them in a fixed order, so that a request with several bad
 * parameters is told about the same one every time.
 */
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

/** `values/`'s parameters as they came; EventService.values reads them in its order. */
export class EventValuesQueryDto {
  @Allow() key?: unknown;
  @Allow() value?: unknown;
  @Allow() event_name?: unknown;
  @Allow() is_column?: unknown;
}
