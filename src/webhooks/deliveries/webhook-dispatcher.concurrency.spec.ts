import { ServerResponse } from 'node:http';
import { WebhookDispatcher } from './webhook-dispatcher';
import { ClaimRoom, FinishedAttempt } from './claims';
import { ENV, delivery, batch, waitUntil, dispatcherHarness } from '../../../test/utils/webhook-dispatcher-harness';

describe(`${WebhookDispatcher.name}, attempts in flight`, () => {
  const h = dispatcherHarness();

  it("claims within each subscription's and owner's share of the slots, counting its attempts in flight", async () => {
    const held: ServerResponse[] = [];
    const endpoint = await h.receiver((response) => held.push(response));
    h.repository.claimDue.mockResolvedValueOnce(
      batch([
        delivery({ id: 1n, url: endpoint.url }),
        delivery({ id: 2n, url: endpoint.url }),
        delivery({ id: 3n, subscriptionId: 11n, url: endpoint.url }),
      ]),
    );
    await h.start({ ...ENV, WEBHOOK_SUBSCRIPTION_CONCURRENCY: '3', WEBHOOK_OWNER_CONCURRENCY: '5' });
    await waitUntil(() => endpoint.received.length === 3 && h.repository.claimDue.mock.calls.length > 1);
    const room = h.repository.claimDue.mock.calls.at(-1)![3] as ClaimRoom;
    expect([room.subscription(10n), room.subscription(11n), room.subscription(12n)]).toEqual([1, 2, 3]);
    expect([room.owner('alice'), room.owner('bob')]).toEqual([2, 5]);
    for (const response of held) response.writeHead(204).end();
    await waitUntil(() => h.repository.recordAttempts.mock.calls.flatMap(([, finished]) => finished).length === 3);
    await h.dispatcher.stop();
    expect([room.subscription(10n), room.owner('alice')]).toEqual([3, 5]);
  });

  it('counts every attempt in flight within the caps, two of one delivery included, and waits for both at stop()', async () => {
    const held: ServerResponse[] = [];
    const endpoint = await h.receiver((response) => held.push(response));
    // The same delivery claimed again while its first attempt runs: its lease ended first (its
    // outcome slow to be h.recorded, say).
    h.repository.claimDue
      .mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]))
      .mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await h.start({
      ...ENV,
      WEBHOOK_CONCURRENCY: '4',
      WEBHOOK_SUBSCRIPTION_CONCURRENCY: '3',
      WEBHOOK_OWNER_CONCURRENCY: '3',
    });
    const inFlight = async () =>
      (await h.registry.getSingleMetric('webhook_attempts_in_flight')!.get()).values[0].value;
    /** What the next claim is given, once the h.dispatcher has claimed again after this point. */
    const nextClaim = async () => {
      const claims = h.repository.claimDue.mock.calls.length;
      await waitUntil(() => h.repository.claimDue.mock.calls.length > claims);
      const [free, , , room] = h.repository.claimDue.mock.calls.at(-1)! as [number, number, string, ClaimRoom];
      return { free, subscription: room.subscription(10n), owner: room.owner('alice') };
    };
    const recordedAttempts = () => h.repository.recordAttempts.mock.calls.flatMap(([, finished]) => finished).length;

    await waitUntil(() => held.length === 2);
    await expect(nextClaim()).resolves.toEqual({ free: 2, subscription: 1, owner: 1 });
    await expect(inFlight()).resolves.toBe(2);

    held[0].writeHead(204).end();
    await waitUntil(() => recordedAttempts() === 1);
    await expect(nextClaim()).resolves.toEqual({ free: 3, subscription: 2, owner: 2 });
    await expect(inFlight()).resolves.toBe(1);

    const stopping = h.dispatcher.stop();
    held[1].writeHead(204).end();
    await stopping;
    expect(recordedAttempts()).toBe(2);
    await expect(inFlight()).resolves.toBe(0);
  });

  it("counts a resent delivery's retries from its resend", async () => {
    const endpoint = await h.receiver((response) => response.writeHead(500).end());
    // Its schedule was spent before the resend: 8 attempts made, all before it.
    h.repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url, attempts: 8, retryFrom: 8 })]));
    await h.start();
    const [, , , outcome] = await h.recorded;
    await h.dispatcher.stop();
    expect(outcome).toEqual({ kind: 'retry', delayMs: expect.any(Number) });
  });

  it('holds a delivery of a disabled subscription without sending it', async () => {
    const endpoint = await h.receiver((response) => response.writeHead(204).end());
    const claimed = delivery({ url: endpoint.url, disabled: true });
    h.repository.claimDue.mockResolvedValueOnce(batch([claimed]));
    await h.start();

    const [recordedDelivery, claim, attempt, outcome] = await h.recorded;
    await h.dispatcher.stop();

    expect(endpoint.received).toHaveLength(0);
    expect(recordedDelivery).toBe(claimed);
    expect(claim).toBe(h.repository.claimDue.mock.calls[0][2]);
    expect(attempt).toEqual({ statusCode: null, error: null, durationMs: 0, startedAt: expect.any(Number) });
    expect(outcome).toEqual({ kind: 'hold' });
    await expect(h.counted()).resolves.toEqual([]);
  });

  it('does not start without WEBHOOK_SECRET_KEY', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    await h.start({ ...ENV, WEBHOOK_SECRET_KEY: '' });
    expect(h.dispatcher.enabled).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(h.repository.claimDue).not.toHaveBeenCalled();
    await expect(h.dispatcher.stop()).resolves.toBeUndefined();
  });

  it('records attempts that finish while a batch is being h.recorded together, in the next batch', async () => {
    const endpoint = await h.receiver((response) => response.writeHead(204).end());
    const claimed = [1n, 2n, 3n].map((id) => delivery({ id, url: endpoint.url }));
    h.repository.claimDue.mockResolvedValueOnce(batch(claimed));
    // The first batch takes a while to record: the other two attempts finish meanwhile.
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const batches: bigint[][] = [];
    h.repository.recordAttempts.mockImplementation(async (_claim: string, finished: FinishedAttempt[]) => {
      batches.push(finished.map(({ delivery }) => delivery.id));
      if (batches.length === 1) await firstHeld;
      return new Set<bigint>();
    });
    // An attempt has finished when it is handed to record(), which is after its receiver answered.
    const finished = jest.spyOn(
      WebhookDispatcher.prototype as unknown as { record: (attempt: FinishedAttempt) => Promise<boolean> },
      'record',
    );
    await h.start();
    await waitUntil(() => finished.mock.calls.length === 3 && batches.length === 1);
    releaseFirst();
    await waitUntil(() => batches.length === 2);
    await h.dispatcher.stop();
    expect(batches.flat().sort()).toEqual([1n, 2n, 3n]);
    expect(batches[1]).toHaveLength(3 - batches[0].length);
    finished.mockRestore();
    expect(await h.counted()).toEqual([
      expect.objectContaining({ value: 3, labels: expect.objectContaining({ result: 'delivered' }) }),
    ]);
  });

  it('stop() waits for the attempt in flight, and nothing is claimed after', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const endpoint = await h.receiver((response) => setTimeout(() => response.writeHead(200).end(), 300));
    h.repository.claimDue.mockResolvedValueOnce(batch([delivery({ url: endpoint.url })]));
    await h.start();
    await jest.advanceTimersByTimeAsync(0);
    await endpoint.first;
    const claims = h.repository.claimDue.mock.calls.length;

    let stopped = false;
    const stopping = h.dispatcher.stop().then(() => (stopped = true));
    // Several poll intervals pass while the receiver has not answered yet.
    await jest.advanceTimersByTimeAsync(299);
    expect(stopped).toBe(false);
    expect(h.repository.recordAttempts).not.toHaveBeenCalled();

    await jest.advanceTimersByTimeAsync(1);
    await stopping;
    expect(h.repository.recordAttempts).toHaveBeenCalledTimes(1);
    const [, , attempt, outcome] = await h.recorded;
    expect(attempt).toEqual({
      statusCode: 200,
      error: null,
      durationMs: expect.any(Number),
      startedAt: expect.any(Number),
    });
    expect(outcome).toEqual({ kind: 'delivered' });

    expect(jest.getTimerCount()).toBe(0);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(h.repository.claimDue).toHaveBeenCalledTimes(claims);
  });
});
