import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { WEBHOOK_EVENTS, WebhookEvent } from '../events/events';
import { MAX_SUBSCRIPTION_ID } from '../subscriptions/subscription-id';

/** A subscription as GET /webhooks shows it: never its secret. */
@ApiSchema({ name: 'Webhook' })
export class WebhookDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    minimum: 1,
    maximum: Number(MAX_SUBSCRIPTION_ID),
    description:
      'Identification number of the subscription, chosen by the service: a random integer from 1 to 2^53 - 1 ' +
      '(Number.MAX_SAFE_INTEGER), which every JSON parser reads exactly, one that reads numbers as doubles ' +
      '(`JSON.parse`) included. A subscription made by an earlier release, which gave ids up to 2^63 - 1, has ' +
      'such an id as well; the id it was given then still names it in paths.',
    example: 4817263512,
  })
  id: bigint;

  @ApiProperty({ example: 'https://hooks.example.com/plant-store' })
  url: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENTS] }, example: ['plant.created'] })
  events: WebhookEvent[];

  @ApiPropertyOptional({ example: 'Inventory sync' })
  description?: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T09:30:00.000Z' })
  createdAt: string;

  @ApiProperty({
    description:
      'False once the subscription was disabled: its endpoint answered 410 Gone, every delivery failed ' +
      'for WEBHOOK_DISABLE_AFTER (5 days by default), or it was disabled through PATCH. Nothing is sent to a ' +
      'disabled subscription; what it would receive is held, and sent if recovered. `PATCH` with ' +
      '`enabled: true` re-enables it.',
    example: true,
  })
  enabled: boolean;

  @ApiPropertyOptional({ format: 'date-time', description: 'When it was disabled' })
  disabledAt?: string;

  @ApiPropertyOptional({ description: 'Why it was disabled', example: 'the endpoint answered 410 Gone' })
  disabledReason?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'Present while the secret the last rotation replaced still signs deliveries (beside the current one): until when.',
    example: '2026-11-25T09:30:00.000Z',
  })
  previousSecretExpiresAt?: string;
}

/** The answer to POST /webhooks: the only time the signing secret is shown. */
@ApiSchema({ name: 'CreatedWebhook' })
export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    description:
      'The signing secret (Standard Webhooks: `whsec_` and base64). Shown only in this answer; keep it to verify ' +
      'the `webhook-signature` of every delivery.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwdIiQ6z3oQ7A=',
  })
  secret: string;
}

/** The answer to POST /webhooks/{id}/rotate-secret: the only time the new secret is shown. */
@ApiSchema({ name: 'RotatedWebhook' })
export class RotatedWebhookDto extends WebhookDto {
  @ApiProperty({
    description:
      'The new signing secret (`whsec_` and base64), which signs every delivery from now on. Shown only in this ' +
      'answer. Until `previousSecretExpiresAt` the secret it replaced signs them too.',
    example: 'whsec_3yQ0mP1nVvXQx1T8RlkM8vZC2Gd2mWcRj0sC9sEoX5g=',
  })
  secret: string;
}

/** The answer to POST /webhooks/{id}/test: how the endpoint took a `webhook.test` event. */
@ApiSchema({ name: 'WebhookTestResult' })
export class WebhookTestResultDto {
  @ApiProperty({
    description: 'The `webhook-id` the test was sent with: `test_` and 32 hex digits',
    example: 'test_5f0c6d2e8a1b4c3d9e7f60a1b2c3d4e5',
  })
  eventId: string;

  @ApiProperty({ description: 'Whether the endpoint answered 2xx, as a delivery would need', example: true })
  delivered: boolean;

  @ApiPropertyOptional({ description: 'The HTTP status the endpoint answered, when it answered', example: 204 })
  statusCode?: number;

  @ApiPropertyOptional({
    description: 'Why no answer was had (timeout, connection refused, address refused, ...)',
    example: 'connection refused',
  })
  error?: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T09:30:01.250Z' })
  attemptedAt: string;

  @ApiProperty({ example: 84 })
  durationMs: number;
}

/** The answer to POST /webhooks/{id}/deliveries/{eventId}/resend. */
@ApiSchema({ name: 'ResentWebhookDelivery' })
export class ResentDeliveryDto {
  @ApiProperty({ description: 'The `webhook-id` it is sent with again', example: 'evt_1842' })
  eventId: string;

  @ApiProperty({ enum: [...WEBHOOK_EVENTS], example: 'plant.created' })
  type: WebhookEvent;
}

/** The answer to POST /webhooks/{id}/recover. */
@ApiSchema({ name: 'WebhookRecoveryStarted' })
export class RecoveryStartedDto {
  @ApiProperty({
    format: 'date-time',
    description: 'The deliveries of events from this time on that failed or were held are sent again',
    example: '2026-11-24T09:00:00.000Z',
  })
  since: string;
}

/** One attempt to deliver an event, as GET /webhooks/{id}/deliveries shows it. */
@ApiSchema({ name: 'WebhookAttempt' })
export class WebhookAttemptDto {
  @ApiProperty({
    description:
      'The `webhook-id` of the event: the same on every attempt and resend. `evt_<n>`, the id GET /events shows ' +
      'and every subscription of the user receives it with; `msg_<n>` for a delivery recorded before the ' +
      'service kept events',
    example: 'evt_1842',
  })
  eventId: string;

  @ApiProperty({ enum: [...WEBHOOK_EVENTS], example: 'plant.created' })
  type: WebhookEvent;

  @ApiProperty({ description: '1 for the first attempt of the event', example: 1 })
  attempt: number;

  @ApiPropertyOptional({ description: 'The HTTP status the endpoint answered, when it answered', example: 200 })
  statusCode?: number;

  @ApiPropertyOptional({
    description: 'Why no answer was had (timeout, connection refused, address refused, ...)',
    example: 'timeout after 10000 ms',
  })
  error?: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-24T09:30:01.250Z' })
  attemptedAt: string;

  @ApiProperty({ example: 84 })
  durationMs: number;
}
