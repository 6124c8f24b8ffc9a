import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsString, MaxLength, ValidateIf } from 'class-validator';
import { IsText } from '../../common/validation/validators';
import { WEBHOOK_EVENTS, WebhookEvent } from '../events/events';
import { MAX_URL_LENGTH, WEBHOOK_DESCRIPTION_MAX_LENGTH } from '../webhooks.limits';
import { eventChoice } from './webhook-event.dto';

/** Present in the body: `null` is a value here (it clears `description`, and is refused for the rest). */
const given = (field: string) => ValidateIf((dto: Record<string, unknown>) => dto[field] !== undefined);

/**
 * The body of PATCH /webhooks/{id}, a JSON Merge Patch (RFC 7396) of the subscription: each field
 * given replaces the subscription's, one left out stays, and `description: null` removes it.
 */
@ApiSchema({ name: 'WebhookChange' })
export class UpdateWebhookDto {
  @ApiPropertyOptional({
    description:
      `A new URL, under the same rules as on create: https, at most ${MAX_URL_LENGTH} characters, a host that ` +
      'resolves only to public addresses. Deliveries not yet sent go to it.',
    maxLength: MAX_URL_LENGTH,
    example: 'https://hooks.example.com/plant-store/v2',
  })
  @given('url')
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  url?: string;

  @ApiPropertyOptional({
    description: `The events to deliver from now on: ${eventChoice()}`,
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
    minItems: 1,
    maxItems: WEBHOOK_EVENTS.length,
    example: ['plant.created'],
  })
  @given('events')
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENTS.length)
  @IsIn(WEBHOOK_EVENTS, { each: true, message: `each value in events must be one of ${WEBHOOK_EVENTS.join(', ')}` })
  events?: WebhookEvent[];

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    description: `A note for people: 1 to ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters; \`null\` removes it`,
    minLength: 1,
    maxLength: WEBHOOK_DESCRIPTION_MAX_LENGTH,
    example: 'Inventory sync (staging)',
  })
  @ValidateIf((dto: UpdateWebhookDto) => dto.description !== undefined && dto.description !== null)
  @IsText(1, WEBHOOK_DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  @ApiPropertyOptional({
    description:
      '`true` re-enables a disabled subscription (its failure clock starts afresh; what it held while disabled ' +
      'is sent only if recovered: `POST /webhooks/{id}/recover`). `false` disables it: nothing is sent to it, ' +
      'and what it would receive is held for a recovery, within the retention.',
    example: true,
  })
  @given('enabled')
  @IsBoolean()
  enabled?: boolean;
}
