import { eventWebhookId, parseWebhookId, webhookId } from './webhook-id';

describe(webhookId.name, () => {
  it("is the event's evt_<n>, or for a delivery recorded before events were its own msg_<n>, all digits", () => {
    expect(webhookId({ id: 7n, eventId: 41n })).toBe('evt_41');
    expect(eventWebhookId(2n ** 63n - 1n)).toBe('evt_9223372036854775807');
    expect(webhookId({ id: 2n ** 63n - 1n, eventId: null })).toBe('msg_9223372036854775807');
  });
});

describe(parseWebhookId.name, () => {
  it('names an event, or a delivery recorded before events were', () => {
    expect(parseWebhookId('evt_41')).toEqual({ eventId: 41n });
    expect(parseWebhookId('msg_9223372036854775807')).toEqual({ deliveryId: 2n ** 63n - 1n });
  });

  it.each(['evt_', 'evt_0', 'evt_01', 'evt_-1', 'msg_9223372036854775808', 'test_ab', 'EVT_1', 'evt_1 ', '41'])(
    'names nothing with %j',
    (text) => expect(parseWebhookId(text)).toBeUndefined(),
  );
});
