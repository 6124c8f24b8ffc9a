import { ApiProperty, ApiPropertyOptional, ApiSchema, getSchemaPath } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { WEBHOOK_EVENTS, WEBHOOK_EVENT_TYPES, WebhookEvent } from '../events/events';
import { INT32_MAX } from '../../plants/plants.limits';
import { EVENTS_DEFAULT_PAGE, EVENTS_MAX_PAGE, RETENTION_MS } from '../webhooks.limits';
import { IsDateTime } from './date-time';
import { listed } from './webhook-event.dto';

/** An event of the user as GET /events shows it: what its webhook carried, with the id it carried. */
@ApiSchema({ name: 'Event' })
export class EventDto {
  @ApiProperty({
    description:
      "The event's id: the `webhook-id` its delivery to every subscription carries (on every attempt and resend)",
    example: 'evt_1842',
  })
  id: string;

  @ApiProperty({ enum: [...WEBHOOK_EVENTS], example: 'plant.created' })
  type: WebhookEvent;

  @ApiProperty({
    format: 'date-time',
    description: "When the change was committed, as the webhook's `timestamp`",
    example: '2026-11-24T09:30:00.123Z',
  })
  timestamp: string;

  @ApiProperty({
    description: `The webhook's \`data\`: ${listed(
      WEBHOOK_EVENTS.map(
        (type) => `${getSchemaPath(WEBHOOK_EVENT_TYPES[type].dataSchema).split('/').pop()} for ${type}`,
      ),
    )}`,
    anyOf: WEBHOOK_EVENTS.map((type) => ({ $ref: getSchemaPath(WEBHOOK_EVENT_TYPES[type].dataSchema) })),
  })
  data: object;
}

const LIMIT_MESSAGE = `limit must be an integer from 1 to ${INT32_MAX}`;
const decimalToNumber = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : value;

/** The query of GET /events. */
export class ListEventsQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    maximum: INT32_MAX,
    description: `The most events in one page; a page never holds more than ${EVENTS_MAX_PAGE}, and holds ${EVENTS_DEFAULT_PAGE} when limit is absent.`,
  })
  @IsOptional()
  @Transform(decimalToNumber)
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(INT32_MAX, { message: LIMIT_MESSAGE })
  limit?: number;

  @ApiPropertyOptional({
    description:
      'Cursor: the events after this event id, in the order asked for. Clients normally follow the ' +
      '`Link: <...>; rel="next"` header rather than building it.',
    example: 'evt_1842',
  })
  @IsOptional()
  @Matches(/^evt_[1-9][0-9]{0,18}$/, { message: 'after must be an event id, evt_ and its number' })
  after?: string;

  @ApiPropertyOptional({
    enum: ['asc', 'desc'],
    default: 'desc',
    description: '`desc`: newest first (the default); `asc`: oldest first, the order to reconcile in',
  })
  @IsOptional()
  @IsIn(['asc', 'desc'], { message: 'order must be asc or desc' })
  order?: 'asc' | 'desc';

  @ApiPropertyOptional({ enum: [...WEBHOOK_EVENTS], description: 'Only events of this type' })
  @IsOptional()
  @IsIn(WEBHOOK_EVENTS, { message: `type must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  type?: WebhookEvent;

  @ApiPropertyOptional({
    format: 'date-time',
    description: `Only events that occurred at or after this time (RFC 3339); events are kept ${RETENTION_MS / 86_400_000} days`,
    example: '2026-11-24T09:00:00Z',
  })
  @IsOptional()
  @IsDateTime()
  since?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'Only events that occurred before this time (RFC 3339)',
    example: '2026-11-25T09:00:00Z',
  })
  @IsOptional()
  @IsDateTime()
  until?: string;
}
