import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsText } from '../../common/validation/validators';
import { MAX_URL_LENGTH } from '../webhooks.limits';
import { WEBHOOK_EVENTS, WebhookEvent } from '../events/events';
import { eventChoice } from './webhook-event.dto';
import { WEBHOOK_DESCRIPTION_MAX_LENGTH } from '../webhooks.limits';

/** The request body of POST /webhooks. */
@ApiSchema({ name: 'NewWebhook' })
export class CreateWebhookDto {
  @ApiProperty({
    description:
      `Where deliveries are POSTed: an https URL of at most ${MAX_URL_LENGTH} characters whose host resolves only to ` +
      'public addresses (loopback, private, link-local, CGNAT and cloud metadata addresses are refused, ' +
      'IPv6 included). Checked now and again before every attempt.',
    maxLength: MAX_URL_LENGTH,
    example: 'https://hooks.example.com/plant-store',
  })
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  url: string;

  @ApiProperty({
    description: `The events to deliver: ${eventChoice()}`,
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
    minItems: 1,
    maxItems: WEBHOOK_EVENTS.length,
    example: [...WEBHOOK_EVENTS],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @IsIn(WEBHOOK_EVENTS, { each: true, message: `each value in events must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  events: WebhookEvent[];

  @ApiPropertyOptional({
    description: `A note for people: 1 to ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters`,
    minLength: 1,
    maxLength: WEBHOOK_DESCRIPTION_MAX_LENGTH,
    example: 'Inventory sync',
  })
  @IsOptional()
  @IsText(1, WEBHOOK_DESCRIPTION_MAX_LENGTH)
  description?: string;
}
