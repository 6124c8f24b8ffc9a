import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'PlantCreatedEventData' })
class CreatedPlantData {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Identification number of the plant', example: 7 })
  id: bigint;

  @ApiProperty({ example: 'Monstera deliciosa' })
  name: string;

  @ApiPropertyOptional({ description: 'Absent when the plant has no tag', example: 'tropical' })
  tag?: string;
}

@ApiSchema({ name: 'PlantDeletedEventData' })
class DeletedPlantData {
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Identification number of the plant', example: 7 })
  id: bigint;
}

/** The body POSTed to a subscription when one of its user's plants was created. */
@ApiSchema({ name: 'PlantCreatedEvent' })
export class PlantCreatedEventDto {
  @ApiProperty({ enum: ['plant.created'], example: 'plant.created' })
  type: 'plant.created';

  @ApiProperty({
    format: 'date-time',
    description: 'When the change was committed',
    example: '2026-11-24T09:30:00.123Z',
  })
  timestamp: string;

  @ApiProperty({ type: CreatedPlantData, description: 'The plant as created (the NewPlant fields)' })
  data: CreatedPlantData;
}

/** The body POSTed to a subscription when one of its user's plants was deleted. */
@ApiSchema({ name: 'PlantDeletedEvent' })
export class PlantDeletedEventDto {
  @ApiProperty({ enum: ['plant.deleted'], example: 'plant.deleted' })
  type: 'plant.deleted';

  @ApiProperty({
    format: 'date-time',
    description: 'When the change was committed',
    example: '2026-11-24T09:31:00.456Z',
  })
  timestamp: string;

  @ApiProperty({ type: DeletedPlantData })
  data: DeletedPlantData;
}

/** What a receiver gets with every delivery, for the OpenAPI document's description of the events. */
export const WEBHOOK_DELIVERY_DESCRIPTION =
  'Each subscription (`POST /webhooks`) receives its events as `POST` requests to its `url`, with a ' +
  'JSON body `{ "type", "timestamp", "data" }` (schemas `PlantCreatedEvent` and `PlantDeletedEvent`; ' +
  'ids are exact int64 JSON integers) and the Standard Webhooks headers `webhook-id` (`msg_<n>`, the same ' +
  'on every retry of one event: drop duplicates by it), `webhook-timestamp` (seconds) and ' +
  '`webhook-signature` (`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` ' +
  'keyed with the subscription secret). A 2xx answer within 10 s is a delivery; `410 Gone` disables the ' +
  'subscription; anything else is retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h by default). ' +
  'Delivery is at least once and in no particular order. See docs/webhooks.md for a receiver.';
