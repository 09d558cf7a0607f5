import { Transform } from 'class-transformer';
import { Allow } from 'class-validator';
import { ApiError } from '../common/api.error';
import { ACTIVITY_PAGE_SIZE, MAX_ACTIVITY_PAGE, MAX_ACTIVITY_PAGE_SIZE } from './activity-log.presenter';

/** `?limit=`: a value that is not a positive integer is the default, as DRF reads one; a larger one is capped. */
function activityLimit(value: unknown): number {
  const limit =
    typeof value === 'string' && /^\d+$/.test(value) && Number(value) > 0
      ? Number(value)
      : ACTIVITY_PAGE_SIZE;
  return Math.min(limit, MAX_ACTIVITY_PAGE_SIZE);
}

/** `?page=`: 1 when absent; otherwise an integer from 1 to MAX_ACTIVITY_PAGE, or DRF's 400 on `page`. */
export function activityPageNumber(value: unknown): number {
  if (value === undefined || value === '') return 1;
  if (typeof value !== 'string' || !/^\s*[+-]?\d+\s*$/.test(value)) {
    throw new ApiError('invalid', 'A valid integer is required.', 'page');
  }
  const page = Number(value);
  if (page < 1) throw new ApiError('invalid', 'Ensure this value is greater than or equal to 1.', 'page');
  if (page > MAX_ACTIVITY_PAGE) {
    throw new ApiError('invalid', `Ensure this value is less than or equal to ${MAX_ACTIVITY_PAGE}.`, 'page');
  }
  return page;
}

/** The query of an activity log page. */
export class ActivityPageQueryDto {
  @Allow()
  @Transform(({ value }) => activityLimit(value))
  limit: number = ACTIVITY_PAGE_SIZE;

  @Allow()
  @Transform(({ value }) => activityPageNumber(value))
  page = 1;
}
