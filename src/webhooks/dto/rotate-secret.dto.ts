import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { DEFAULT_SECRET_GRACE_SECONDS, MAX_SECRET_GRACE_SECONDS } from '../webhooks.limits';

const GRACE_MESSAGE = `gracePeriodSeconds must be an integer from 0 to ${MAX_SECRET_GRACE_SECONDS}`;

/** JSON integers arrive as bigint (src/common/json): a small one is a number here; anything else fails validation. */
const smallIntegerToNumber = ({ value }: { value: unknown }) =>
  typeof value === 'bigint' && value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;

/** The body of POST /webhooks/{id}/rotate-secret, which may be left out. */
@ApiSchema({ name: 'WebhookSecretRotation' })
export class RotateSecretDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_SECRET_GRACE_SECONDS,
    description:
      'How long the secret being replaced keeps signing deliveries beside the new one, in seconds: ' +
      `0 to ${MAX_SECRET_GRACE_SECONDS} (${MAX_SECRET_GRACE_SECONDS / 86_400} days), ` +
      `${DEFAULT_SECRET_GRACE_SECONDS} (${DEFAULT_SECRET_GRACE_SECONDS / 3600} hours) when left out. 0 retires it at once.`,
    example: 3600,
  })
  @IsOptional()
  @Transform(smallIntegerToNumber)
  @IsInt({ message: GRACE_MESSAGE })
  @Min(0, { message: GRACE_MESSAGE })
  @Max(MAX_SECRET_GRACE_SECONDS, { message: GRACE_MESSAGE })
  gracePeriodSeconds?: number;
}
