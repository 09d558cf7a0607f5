import { Transform } from 'class-transformer';
import { Allow } from 'class-validator';
import { DEFAULT_PAGE_SIZE, type PageRequest, pageParameter } from './pagination.util';

/** As DRF's LimitOffsetPagination: a bad limit or offset means the default, never an error. */
export class PageQueryDto {
  @Allow()
  @Transform(({ value }) => pageParameter(value, { strict: true }) ?? DEFAULT_PAGE_SIZE)
  limit: number = DEFAULT_PAGE_SIZE;

  @Allow()
  @Transform(({ value }) => pageParameter(value, { strict: false }) ?? 0)
  offset = 0;

  get page(): PageRequest {
    return { limit: this.limit, offset: this.offset };
  }
}
