import { parse } from 'lossless-json';
import { performance } from 'node:perf_hooks';
import { WEBHOOK_EVENTS, WebhookEvent } from '../../src/webhooks/events/events';
import { TestApp, bearer } from './test-app';

/** A plant change one instance was asked for while another made the owner's subscription. */
interface Change {
  type: WebhookEvent;
  id: number;
  /** When the request was sent, on this process's clock. */
  sentAt: number;
  status: number;
}

export interface AroundASubscription {
  /** Changes asked for before the subscription's 201 arrived (their events may or may not be recorded). */
  before: number;
  /** Changes asked for after it. */
  after: number;
  /** Changes asked for after the 201 that have no event: the promise broken. */
  missing: string[];
}

/**
 * The promise of `POST /webhooks` across instances (docs/webhooks.md, "How an event is recorded"):
 * every plant change asked for after its 201 has its event, whichever instance makes it. While
 * `subscriber` makes `owner`'s subscription, `writers` requests at a time go to `changer`, each
 * creating a plant and deleting it, one after the other, from before the subscription is asked for
 * until each has sent `afterwards` changes after its 201; then the owner's events are read.
 */
export async function changesAroundASubscription(
  subscriber: TestApp,
  changer: TestApp,
  owner: string,
  { writers = 2, afterwards = 6, firstId = 1 } = {},
): Promise<AroundASubscription> {
  const token = bearer(await subscriber.token({ subject: owner }));
  const changes: Change[] = [];
  let answeredAt = Infinity;
  const writer = async (lane: number) => {
    let sentAfter = 0;
    for (let n = 0; sentAfter < afterwards && n < 10_000; n++) {
      const id = firstId + n * writers + lane;
      for (const type of ['plant.created', 'plant.deleted'] as const) {
        const sentAt = performance.now();
        const res =
          type === 'plant.created'
            ? await changer
                .http()
                .post('/plants')
                .set(token)
                .send({ id, name: `Around ${id}` })
            : await changer.http().delete(`/plants/${id}`).set(token);
        changes.push({ type, id, sentAt, status: res.status });
        if (sentAt > answeredAt) sentAfter++;
      }
    }
  };
  const writing = Array.from({ length: writers }, (_, lane) => writer(lane));
  // Changes under way when the subscription is asked for.
  while (changes.length < writers * 2) await new Promise((resolve) => setTimeout(resolve, 5));
  const subscribed = await subscriber
    .http()
    .post('/webhooks')
    .set(token)
    // Every event type, so every change after the 201 must have its event.
    .send({ url: 'http://127.0.0.1:9/hooks', events: WEBHOOK_EVENTS });
  answeredAt = performance.now();
  if (subscribed.status !== 201) throw new Error(`POST /webhooks answered ${subscribed.status}`);
  await Promise.all(writing);

  const recorded = new Set<string>();
  for (let page: string | undefined = '/events?order=asc&limit=1000'; page !== undefined;) {
    const res = await changer.http().get(page).set(token);
    if (res.status !== 200) throw new Error(`GET /events answered ${res.status}`);
    for (const event of parse(res.text) as { type: string; data: { id: unknown } }[]) {
      recorded.add(`${event.type} ${String(event.data.id)}`);
    }
    const next = /^<([^>]+)>; rel="next"$/.exec(String(res.headers['link'] ?? ''));
    page = next ? `/events${next[1]}` : undefined;
  }
  const failed = changes.filter((change) => change.status >= 300);
  if (failed.length > 0) throw new Error(`Changes refused: ${JSON.stringify(failed)}`);
  const after = changes.filter((change) => change.sentAt > answeredAt);
  return {
    before: changes.length - after.length,
    after: after.length,
    missing: after.map((change) => `${change.type} ${change.id}`).filter((event) => !recorded.has(event)),
  };
}
