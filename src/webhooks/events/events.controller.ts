import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal } from '../../auth/decorators/current-principal.decorator';
import { RequireScopes } from '../../auth/decorators/require-scopes.decorator';
import { Principal } from '../../auth/principal';
import { ApiErrors } from '../../common/openapi/api-errors.decorator';
import { InvalidRequest } from '../../common/validation/validation.errors';
import { EventDto, ListEventsQueryDto } from '../dto/event.dto';
import { WebhooksNotConfigured } from '../webhooks.errors';
import { RETENTION_MS } from '../webhooks.limits';
import { WebhooksService } from '../webhooks.service';

/** The user's webhook events, to pull: what a consumer that missed deliveries reconciles from. */
@ApiTags('webhooks')
@ApiBearerAuth('bearer')
@ApiErrors(WebhooksNotConfigured.doc)
@Controller('events')
export class EventsController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @RequireScopes('webhooks:manage')
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'List webhook events',
    description:
      "The calling user's webhook events, each with the `id` (its `webhook-id`), `type`, `timestamp` and `data` its " +
      'deliveries carried: the events a subscription of the user (enabled or disabled) wanted when they happened. ' +
      `Newest first unless \`order=asc\`, one page at a time; kept ${RETENTION_MS / 86_400_000} days. When more remain, ` +
      'the `Link` header carries the next page.',
  })
  @ApiOkResponse({
    type: EventDto,
    isArray: true,
    description: 'One page of events',
    headers: {
      Link: {
        description:
          'Present when more events remain: `<?limit=N&order=desc&after=evt_ID...>; rel="next"` (RFC 8288), a relative ' +
          'reference holding only a query, resolved against the URL of this request as for `GET /plants`.',
        schema: { type: 'string' },
      },
    },
  })
  @ApiErrors(InvalidRequest.doc)
  async list(
    @CurrentPrincipal() caller: Principal,
    @Query() query: ListEventsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<EventDto[]> {
    const page = await this.webhooks.events(caller.subject, query);
    if (page.next !== undefined) {
      // Query only, as for /plants: it resolves under whatever prefix the client reached the API at.
      const next = new URLSearchParams({ limit: String(page.limit), order: query.order ?? 'desc' });
      for (const name of ['type', 'since', 'until'] as const) {
        if (query[name] !== undefined) next.set(name, query[name]);
      }
      next.set('after', page.next);
      res.setHeader('Link', `<?${next.toString()}>; rel="next"`);
    }
    return page.events;
  }
}
