import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { webhooksSettings } from '../../config/env/webhooks';
import {
  TestEventData,
  WEBHOOK_EVENTS,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_TEST_EVENT,
  WebhookEvent,
  eventOperationId,
  eventSchemaName,
} from '../events/events';

type DocumentedEvent = WebhookEvent | typeof WEBHOOK_TEST_EVENT;

/** What the document says of each event it shows: the plant events' declarations, and the test's. */
const DOCUMENTED: Record<
  DocumentedEvent,
  { summary: string; dataSchema: new () => object; dataDescription?: string; exampleTimestamp: string }
> = {
  ...WEBHOOK_EVENT_TYPES,
  [WEBHOOK_TEST_EVENT]: {
    summary: 'A test of the endpoint (POST /webhooks/{id}/test), sent only when asked for',
    dataSchema: TestEventData,
    exampleTimestamp: '2026-11-24T09:29:00.000Z',
  },
};
const DOCUMENTED_EVENTS = [...WEBHOOK_EVENTS, WEBHOOK_TEST_EVENT] as DocumentedEvent[];

/** The body POSTed to a subscription for `type`, as a schema of the OpenAPI document. */
function eventBodySchema(type: DocumentedEvent): new () => object {
  const declaration = DOCUMENTED[type];
  class EventBody {}
  const property = (name: string, options: Parameters<typeof ApiProperty>[0]) =>
    ApiProperty(options)(EventBody.prototype, name);
  property('type', { type: String, enum: [type], example: type });
  property('timestamp', {
    type: String,
    format: 'date-time',
    description: 'When the change was committed',
    example: declaration.exampleTimestamp,
  });
  property('data', {
    type: declaration.dataSchema,
    ...('dataDescription' in declaration ? { description: declaration.dataDescription } : {}),
  });
  ApiSchema({ name: eventSchemaName(type) })(EventBody);
  return EventBody;
}

/** The event bodies' schema classes, for the document's extra models. */
export const WEBHOOK_EVENT_SCHEMAS = DOCUMENTED_EVENTS.map(eventBodySchema);

/**
 * The events as OpenAPI 3.1 would declare them under `webhooks`, for the `x-webhooks` extension a
 * 3.0 document can carry (Redoc and other renderers show it): one POST per event, with its body.
 */
export function webhookEventOperations(): Record<DocumentedEvent, object> {
  const operation = (type: DocumentedEvent) => ({
    post: {
      operationId: eventOperationId(type),
      summary: DOCUMENTED[type].summary,
      tags: ['webhooks'],
      // A delivery carries no token of this API: the receiver checks its Standard Webhooks signature.
      security: [],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${eventSchemaName(type)}` } } },
      },
      responses: {
        '200': { description: 'Any 2xx: delivered' },
        '410': { description: 'Gone: the subscription is disabled' },
      },
    },
  });
  return Object.fromEntries(DOCUMENTED_EVENTS.map((type) => [type, operation(type)])) as Record<
    DocumentedEvent,
    object
  >;
}

/** `a`, `a and b`, `a, b and c`: how the docs list names. */
export function listed(names: readonly string[], quote = (name: string) => name): string {
  const quoted = names.map(quote);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}`;
}

/** `one or both of plant.created and plant.deleted`: the events a subscription chooses from, as its texts say it. */
export function eventChoice(quote = (name: string) => name): string {
  return `${WEBHOOK_EVENTS.length === 2 ? 'one or both' : 'one or more'} of ${listed(WEBHOOK_EVENTS, quote)}`;
}

const UNITS = [
  ['h', 3_600_000],
  ['min', 60_000],
  ['s', 1000],
] as const;

/** `[5000, 300000, 7200000]` → `5 s, 5 min, 2 h`: the retry schedule's default as people read it. */
function readableSchedule(scheduleMs: readonly number[]): string {
  const readable = (ms: number) => {
    const unit = UNITS.find(([, size]) => ms >= size && ms % size === 0);
    return unit ? `${ms / unit[1]} ${unit[0]}` : `${ms} ms`;
  };
  return scheduleMs.map(readable).join(', ');
}

/** What a receiver gets with every delivery, for the OpenAPI document's description of the events. */
export const WEBHOOK_DELIVERY_DESCRIPTION =
  'Each subscription (`POST /webhooks`) receives its events as `POST` requests to its `url`, with a ' +
  `JSON body \`{ "type", "timestamp", "data" }\` (schemas ${listed(WEBHOOK_EVENTS.map(eventSchemaName), (name) => `\`${name}\``)}; ` +
  'ids are exact int64 JSON integers) and the Standard Webhooks headers `webhook-id` (`evt_<n>`, the ' +
  "event's id in GET /events, the same on every retry and resend of one event and for every subscription " +
  'that receives it: drop duplicates by it), `webhook-timestamp` (seconds) and `webhook-signature` (`v1,` and ' +
  'the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the subscription secret; ' +
  'during the grace period of a rotated secret, a second `v1,` signature with the previous secret, space-separated). ' +
  `A receiver answers 2xx to a \`type\` it does not know (\`${WEBHOOK_TEST_EVENT}\`, sent only by a test). A 2xx answer within ${webhooksSettings.WEBHOOK_TIMEOUT_MS.defaultValue / 1000} s is a delivery; \`410 Gone\` disables the ` +
  `subscription; anything else is retried (${readableSchedule(webhooksSettings.WEBHOOK_RETRY_SCHEDULE.defaultValue)} by default). ` +
  'Delivery is at least once and in no particular order. See docs/webhooks.md for a receiver.';
