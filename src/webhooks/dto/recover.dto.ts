import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { RETENTION_MS } from '../webhooks.limits';
import { IsDateTime } from './date-time';

/** The body of POST /webhooks/{id}/recover. */
@ApiSchema({ name: 'WebhookRecovery' })
export class RecoverDto {
  @ApiProperty({
    format: 'date-time',
    description:
      'Recover the deliveries of events that occurred at or after this time (RFC 3339, with its time zone), ' +
      `within the last ${RETENTION_MS / 86_400_000} days and not in the future.`,
    example: '2026-11-24T09:00:00Z',
  })
  @IsDateTime()
  since: string;
}
