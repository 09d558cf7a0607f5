import { ApiProperty } from '@nestjs/swagger';
import { ERROR_TABLE, type ErrorBody, type ErrorCode, type ErrorType } from '../common/api.error';
import { ApiModel } from './api-responses.decorator';

const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];
const ERROR_TYPES = [...new Set(Object.values(ERROR_TABLE).map(({ type }) => type))];

/** PostHog's drf-exceptions-hog shape; the document narrows `code` and `type` per status. */
@ApiModel('Error')
export class ErrorResponse implements ErrorBody {
  @ApiProperty({ enum: ERROR_TYPES })
  type!: ErrorType;

  @ApiProperty({ enum: ERROR_CODES })
  code!: ErrorCode;

  @ApiProperty()
  detail!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The field at fault (nested keys joined by `__`), or null',
  })
  attr!: string | null;
}
