import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../auth/decorators/current-principal.decorator';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator';
import { Principal } from '../auth/principal';
import { TakesJsonBody } from '../common/json/json-body.guard';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ParseInt64Pipe } from '../common/validation/parse-int64.pipe';
import { InvalidRequest } from '../common/validation/validation.errors';
import { Idempotent } from '../idempotency/idempotent.decorator';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { RecoverDto } from './dto/recover.dto';
import { RotateSecretDto } from './dto/rotate-secret.dto';
import { UpdateWebhookDto } from './dto/update-webhook.dto';
import {
  CreatedWebhookDto,
  RecoveryStartedDto,
  ResentDeliveryDto,
  RotatedWebhookDto,
  WebhookAttemptDto,
  WebhookDto,
  WebhookTestResultDto,
} from './dto/webhook.dto';
import {
  InvalidWebhookId,
  RecoverSinceOutOfRange,
  TooManySubscriptions,
  WebhookDeliveryNotFound,
  WebhookDisabled,
  WebhookNotFound,
  WebhookTestInProgress,
  WebhooksNotConfigured,
} from './webhooks.errors';
import {
  DEFAULT_SECRET_GRACE_SECONDS,
  MAX_SECRET_GRACE_SECONDS,
  MAX_SUBSCRIPTIONS_PER_OWNER,
  RECENT_ATTEMPTS,
  RETENTION_MS,
} from './webhooks.limits';
import { WebhooksService } from './webhooks.service';
import { WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT } from './events/events';

const ID_PARAM = {
  name: 'id',
  type: 'integer',
  format: 'int64',
  description: 'ID of the subscription, or the id an earlier release gave it (up to 2^63 - 1)',
} as const;

@ApiTags('webhooks')
@ApiBearerAuth('bearer')
@ApiErrors(WebhooksNotConfigured.doc)
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Subscribe to plant events',
    description:
      `Every ${WEBHOOK_EVENTS.join(' / ')} of the calling user committed after this answer is delivered to \`url\`, ` +
      'signed per Standard Webhooks with the `secret` of this answer (shown only here). See the `webhooks` tag for ' +
      `the deliveries. At most ${MAX_SUBSCRIPTIONS_PER_OWNER} subscriptions per user. Safe to retry with an ` +
      '`Idempotency-Key`: a repeat by the same user gets the same subscription and secret.',
  })
  @ApiCreatedResponse({ type: CreatedWebhookDto, description: 'The subscription, with its signing secret' })
  @ApiErrors(InvalidRequest.doc)
  @Idempotent<WebhooksController['create']>({
    conflict: TooManySubscriptions.doc,
    // The answer holds the signing secret: it is stored sealed with WEBHOOK_SECRET_KEY, as the secret itself is.
    sealAnswer: true,
    // Where the URL resolves is checked before the transaction that stores the subscription.
    prepare(this: WebhooksController, _caller, dto) {
      return this.webhooks.checkUrl(dto.url);
    },
  })
  @TakesJsonBody()
  create(@CurrentPrincipal() caller: Principal, @Body() dto: CreateWebhookDto): Promise<CreatedWebhookDto> {
    return this.webhooks.subscribe(caller.subject, dto);
  }

  @Get()
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'List webhook subscriptions',
    description:
      "The calling user's subscriptions in id order, with whether each is still enabled; never their secrets.",
  })
  @ApiOkResponse({ type: WebhookDto, isArray: true, description: 'Every subscription of the user' })
  list(@CurrentPrincipal() caller: Principal): Promise<WebhookDto[]> {
    return this.webhooks.list(caller.subject);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Unsubscribe',
    description: 'Deletes the subscription with its pending deliveries and their history; nothing more is sent to it.',
  })
  @ApiParam(ID_PARAM)
  @ApiNoContentResponse({ description: 'Subscription deleted' })
  @ApiErrors(InvalidRequest.doc, WebhookNotFound.doc)
  @Idempotent()
  remove(@CurrentPrincipal() caller: Principal, @Param('id', ParseInt64Pipe) id: bigint): Promise<void> {
    return this.webhooks.remove(caller.subject, id);
  }

  @Patch(':id')
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'updateWebhook',
    summary: 'Change a subscription',
    description:
      'A JSON Merge Patch (RFC 7396) of the subscription: `url`, `events`, `description` (`null` removes it) and ' +
      '`enabled`; what the body leaves out stays. A new URL passes the address policy as on create. `enabled: true` ' +
      're-enables a disabled subscription and starts its failure clock afresh; what it held while disabled is sent ' +
      'only if recovered (`POST /webhooks/{id}/recover`). `enabled: false` disables it. The id and the secret stay. ' +
      'Safe to retry with an `Idempotency-Key`.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookDto, description: 'The subscription as changed' })
  @ApiErrors(InvalidRequest.doc, WebhookNotFound.doc)
  @Idempotent<WebhooksController['update']>({
    // A new URL is checked before the transaction that stores it, as on create.
    prepare(this: WebhooksController, _caller, _id, dto) {
      return dto.url === undefined ? Promise.resolve() : this.webhooks.checkUrl(dto.url);
    },
  })
  @TakesJsonBody('application/merge-patch+json', 'application/json')
  update(
    @CurrentPrincipal() caller: Principal,
    @Param('id', ParseInt64Pipe) id: bigint,
    @Body() dto: UpdateWebhookDto,
  ): Promise<WebhookDto> {
    return this.webhooks.update(caller.subject, id, dto);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the signing secret',
    description:
      'Makes a new signing secret, shown only in this answer. The secret it replaces keeps signing every delivery ' +
      `beside the new one for \`gracePeriodSeconds\` (${DEFAULT_SECRET_GRACE_SECONDS / 3600} hours unless the body says, at most ` +
      `${MAX_SECRET_GRACE_SECONDS / 86_400} days): \`webhook-signature\` then carries both signatures, so a receiver verifying ` +
      'with either accepts it; after that only the new one. A secret an earlier rotation replaced stops signing at ' +
      'once. The body may be left out. Safe to retry with an `Idempotency-Key`: a repeat gets the same new secret.',
  })
  @ApiParam(ID_PARAM)
  @ApiBody({ type: RotateSecretDto, required: false })
  @ApiOkResponse({ type: RotatedWebhookDto, description: 'The subscription, with its new signing secret' })
  @ApiErrors(InvalidRequest.doc, WebhookNotFound.doc)
  // The answer holds the new secret: it is stored sealed, as the secret itself is.
  @Idempotent({ sealAnswer: true })
  @TakesJsonBody()
  rotateSecret(
    @CurrentPrincipal() caller: Principal,
    @Param('id', ParseInt64Pipe) id: bigint,
    @Body() dto?: RotateSecretDto,
  ): Promise<RotatedWebhookDto> {
    return this.webhooks.rotateSecret(caller.subject, id, dto?.gracePeriodSeconds);
  }

  @Post(':id/test')
  @HttpCode(200)
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'testWebhook',
    summary: 'Send a test event',
    description:
      `Sends a \`${WEBHOOK_TEST_EVENT}\` event to the subscription now, signed as a delivery, through the same address ` +
      'policy, sender and timeout, and answers with how the endpoint took it (the answer is 200 whatever the ' +
      'endpoint answered). Nothing is recorded: no event, no delivery attempt, no effect on the failure clock; a ' +
      'disabled subscription can be tested too. One test of a subscription at a time. An `Idempotency-Key` makes a ' +
      'retry give the first outcome instead of sending again.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookTestResultDto, description: 'How the endpoint took the test event' })
  @ApiErrors(InvalidRequest.doc, WebhookNotFound.doc)
  @Idempotent({ conflict: WebhookTestInProgress.doc })
  test(@CurrentPrincipal() caller: Principal, @Param('id', ParseInt64Pipe) id: bigint): Promise<WebhookTestResultDto> {
    return this.webhooks.test(caller.subject, id);
  }

  @Post(':id/deliveries/:eventId/resend')
  @HttpCode(202)
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'resendWebhookDelivery',
    summary: 'Resend one delivery',
    description:
      'Sends the delivery of this event to the subscription again, as a new attempt made as soon as a slot is free, ' +
      'with the same `webhook-id` (a receiver that drops duplicates keeps working) and the retry schedule from its ' +
      'start, whatever it ended as (delivered, failed, held); one being attempted at this moment is sent once more ' +
      `after it. Deliveries are kept ${RETENTION_MS / 86_400_000} days. An \`Idempotency-Key\` makes a retry not resend twice.`,
  })
  @ApiParam(ID_PARAM)
  @ApiParam({
    name: 'eventId',
    type: 'string',
    description:
      'The `webhook-id` of the delivery (`evt_<n>`, or `msg_<n>`), as GET /webhooks/{id}/deliveries and GET /events show it',
    example: 'evt_1842',
  })
  @ApiAcceptedResponse({ type: ResentDeliveryDto, description: 'The delivery is due again' })
  @ApiErrors(InvalidRequest.doc, InvalidWebhookId.doc, WebhookNotFound.doc, WebhookDeliveryNotFound.doc)
  @Idempotent({ conflict: WebhookDisabled.doc })
  resend(
    @CurrentPrincipal() caller: Principal,
    @Param('id', ParseInt64Pipe) id: bigint,
    @Param('eventId') eventId: string,
  ): Promise<ResentDeliveryDto> {
    return this.webhooks.resend(caller.subject, id, eventId);
  }

  @Post(':id/recover')
  @HttpCode(202)
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'recoverWebhook',
    summary: 'Recover failed and held deliveries',
    description:
      'Sends again every delivery to the subscription of an event since `since` that failed (its retries spent) or ' +
      'was held while the subscription was disabled, each with its `webhook-id` and the retry schedule from its ' +
      'start. It runs in the background, at the pace the subscription is delivered (the slots it may hold), so a ' +
      'large backlog never holds up other subscriptions. A recovery of the subscription under way is replaced. ' +
      `\`since\` is within the last ${RETENTION_MS / 86_400_000} days, what deliveries are kept for.`,
  })
  @ApiParam(ID_PARAM)
  @ApiAcceptedResponse({ type: RecoveryStartedDto, description: 'The recovery has started' })
  @ApiErrors(InvalidRequest.doc, RecoverSinceOutOfRange.doc, WebhookNotFound.doc)
  @Idempotent({ conflict: WebhookDisabled.doc })
  @TakesJsonBody()
  recover(
    @CurrentPrincipal() caller: Principal,
    @Param('id', ParseInt64Pipe) id: bigint,
    @Body() dto: RecoverDto,
  ): Promise<RecoveryStartedDto> {
    return this.webhooks.recover(caller.subject, id, dto.since);
  }

  @Get(':id/deliveries')
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: 'Recent delivery attempts',
    description: `The last ${RECENT_ATTEMPTS} attempts to deliver events to this subscription, newest first, kept for ${RETENTION_MS / 86_400_000} days.`,
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookAttemptDto, isArray: true, description: 'Recent attempts, newest first' })
  @ApiErrors(InvalidRequest.doc, WebhookNotFound.doc)
  deliveries(
    @CurrentPrincipal() caller: Principal,
    @Param('id', ParseInt64Pipe) id: bigint,
  ): Promise<WebhookAttemptDto[]> {
    return this.webhooks.deliveries(caller.subject, id);
  }
}
