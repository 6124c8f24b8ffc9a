import { Test } from '@nestjs/testing';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Database } from '../../database';
import { FEED_KNOWN_FOR_MS, FEED_MAX_OWNERS, FEED_POLL_MS, SubscribedOwners } from './subscribed-owners';
import { FeedPage, SubscriptionsRepository } from './subscriptions.repository';

describe(SubscribedOwners.name, () => {
  let owners: SubscribedOwners;
  /** The feed's pages the repository answers, in turn; the last one again once they run out. */
  let pages: (FeedPage | Error)[];
  let ownersSince: jest.Mock;
  let afterCommit: jest.Mock;

  const page = (version: bigint, ...names: string[]): FeedPage => ({ owners: names, version, full: false });
  /** Until the repository has been read `count` times in all. */
  const reads = async (count: number) => {
    while (ownersSince.mock.calls.length < count) await sleep(5);
    // And the read's answer taken in.
    await sleep(5);
  };

  beforeEach(async () => {
    pages = [page(4n, 'alice')];
    ownersSince = jest.fn(async () => {
      const next = pages.length > 1 ? pages.shift()! : pages[0];
      if (next instanceof Error) throw next;
      return next;
    });
    afterCommit = jest.fn((then: () => Promise<void>) => then());
    const moduleRef = await Test.createTestingModule({
      providers: [
        SubscribedOwners,
        { provide: Database, useValue: { afterCommit } },
        { provide: SubscriptionsRepository, useValue: { ownersSince } },
      ],
    }).compile();
    owners = moduleRef.get(SubscribedOwners);
  });

  afterEach(() => owners.beforeApplicationShutdown());

  it('knows nothing before its first read of the feed: every owner takes the guarded statement', () => {
    expect(owners.knownWithout('bob')).toBe(false);
    expect(ownersSince).not.toHaveBeenCalled();
  });

  it('reads every subscription first, then what is newer than the highest version read, every poll', async () => {
    pages = [page(4n, 'alice'), page(6n, 'bob', 'bob'), page(6n)];
    owners.onApplicationBootstrap();
    await reads(3);
    expect(ownersSince.mock.calls.slice(0, 3)).toEqual([
      [-1n, FEED_MAX_OWNERS + 1],
      [4n, FEED_MAX_OWNERS + 1],
      [6n, FEED_MAX_OWNERS + 1],
    ]);
    expect(owners.knownWithout('alice')).toBe(false);
    expect(owners.knownWithout('bob')).toBe(false);
    expect(owners.knownWithout('carol')).toBe(true);
  });

  it(`reads every ${FEED_POLL_MS} ms`, async () => {
    owners.onApplicationBootstrap();
    await reads(1);
    const from = ownersSince.mock.calls.length;
    await sleep(FEED_POLL_MS * 5);
    // Timers may run late on a busy machine, never early.
    expect(ownersSince.mock.calls.length - from).toBeLessThanOrEqual(5);
    expect(ownersSince.mock.calls.length - from).toBeGreaterThanOrEqual(1);
  });

  it(`forgets what it read ${FEED_KNOWN_FOR_MS} ms after the last read that answered, and knows again once one does`, async () => {
    pages = [page(4n, 'alice'), new Error('connect ECONNREFUSED')];
    owners.onApplicationBootstrap();
    await reads(1);
    expect(owners.knownWithout('carol')).toBe(true);
    // The read that answered was sent before now: its knowledge is gone once this much has passed.
    await sleep(FEED_KNOWN_FOR_MS);
    expect(owners.knownWithout('carol')).toBe(false);
    pages = [page(4n)];
    const failed = ownersSince.mock.calls.length;
    await reads(failed + 1);
    expect(owners.knownWithout('carol')).toBe(true);
    expect(owners.knownWithout('alice')).toBe(false);
  });

  it(`stops reading, and knows nothing from then on, past ${FEED_MAX_OWNERS} owners`, async () => {
    pages = [{ owners: ['alice'], version: 9n, full: true }];
    owners.onApplicationBootstrap();
    await reads(1);
    await sleep(FEED_POLL_MS * 2);
    expect(ownersSince).toHaveBeenCalledTimes(1);
    expect(owners.knownWithout('carol')).toBe(false);
  });

  it(`knows its own new subscriber at once, and answers ${FEED_KNOWN_FOR_MS} ms after the commit`, async () => {
    owners.onApplicationBootstrap();
    await reads(1);
    expect(owners.knownWithout('dave')).toBe(true);
    const started = performance.now();
    const announced = owners.subscribed('dave');
    expect(owners.knownWithout('dave')).toBe(false);
    await announced;
    expect(afterCommit).toHaveBeenCalledTimes(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(FEED_KNOWN_FOR_MS);
  });

  it('waits for the commit of the transaction it was announced in, not before', async () => {
    let commit!: () => Promise<void>;
    afterCommit.mockImplementation(async (then: () => Promise<void>) => {
      commit = then;
    });
    await owners.subscribed('erin');
    expect(afterCommit).toHaveBeenCalledTimes(1);
    const started = performance.now();
    await commit();
    expect(performance.now() - started).toBeGreaterThanOrEqual(FEED_KNOWN_FOR_MS);
  });
});
