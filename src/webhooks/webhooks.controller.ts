import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
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
import { CreatedWebhookDto, WebhookAttemptDto, WebhookDto } from './dto/webhook.dto';
import { TooManySubscriptions, WebhookNotFound, WebhooksNotConfigured } from './webhooks.errors';
import { MAX_SUBSCRIPTIONS_PER_OWNER } from './webhooks.limits';
import { WebhooksService } from './webhooks.service';
import { RECENT_ATTEMPTS } from './webhooks.limits';
import { RETENTION_MS } from './webhooks.limits';
import { WEBHOOK_EVENTS } from './events';

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
