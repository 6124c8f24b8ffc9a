import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { parseInt64 } from '../../common/int64';
import { IsInt64 } from '../../common/validation/validators';
import { plantsSettings } from '../../config/env/plants';
import { INT32_MAX } from '../plants.limits';

const LIMIT_MESSAGE = `limit must be an integer from 1 to ${INT32_MAX}`;

/** Query values arrive as text; only plain decimal integers are converted, anything else fails validation. */
const decimalToNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : value;
const decimalToInt64 = ({ value }: { value: unknown }) => parseInt64(value) ?? value;

export class ListPlantsQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: INT32_MAX,
    description:
      'The maximum number of results to return in one page. A page never holds more than the ' +
      `server cap (PLANTS_MAX_PAGE, ${plantsSettings.PLANTS_MAX_PAGE.defaultValue} by default), also when limit is absent.`,
  })
  @IsOptional()
  @Transform(decimalToNumber)
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(INT32_MAX, { message: LIMIT_MESSAGE })
  limit?: number;

  @ApiPropertyOptional({
    type: 'integer',
    format: 'int64',
    description:
      'Cursor: return plants whose id is greater than this one. Clients normally follow the ' +
      '`Link: <...>; rel="next"` header rather than building it.',
  })
  @IsOptional()
  @Transform(decimalToInt64)
  @IsInt64()
  after?: bigint;
}
