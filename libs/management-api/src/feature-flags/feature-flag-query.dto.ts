import { Transform } from 'class-transformer';
import { Allow } from 'class-validator';
import { PageQueryDto } from '../common/page-query.dto';
import type { FlagListFilters } from './feature-flag.repository';

const stringOnly = ({ value }: { value: unknown }) => (typeof value === 'string' ? value : undefined);

/** The list's filters: a value it does not know is no filter, as in PostHog. */
export class FlagListQueryDto extends PageQueryDto {
  @Allow()
  @Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : undefined))
  active?: boolean;

  @Allow()
  @Transform(({ value }: { value: unknown }) =>
    value === 'boolean' || value === 'multivariant' ? value : undefined,
  )
  type?: 'boolean' | 'multivariant';

  @Allow()
  @Transform(stringOnly)
  search?: string;

  get filters(): FlagListFilters {
    return { active: this.active, type: this.type, search: this.search };
  }
}

/** `?distinct_id=&groups=` of evaluation_reasons and my_flags. */
export class FlagEvaluationQueryDto {
  @Allow()
  @Transform(stringOnly)
  distinct_id?: string;

  @Allow()
  groups?: unknown;
}

/** `?send_cohorts` of local_evaluation: present, with any value, includes the cohorts. */
export class LocalEvaluationQueryDto {
  @Allow()
  @Transform(() => true)
  send_cohorts = false;
}
