import { Test } from '@nestjs/testing';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Database } from '../../database';
import {
  FEED_KNOWN_FOR_MS,
  FEED_MAX_OWNERS,
  FEED_POLL_MS,
  FEED_REREAD_MS,
  SubscribedOwners,
} from './subscribed-owners';
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

  afterEach(async () => {
    await owners.beforeApplicationShutdown();
    jest.restoreAllMocks();
  });

  /** Moves the instance's clock (performance.now) forward by `ms`, at once. */
  const later = (() => {
    const now = performance.now.bind(performance);
    return (ms: number) => {
      const ahead = performance.now() - now() + ms;
      jest.spyOn(performance, 'now').mockImplementation(() => now() + ahead);
    };
  })();

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

  it(`reads every subscription again every ${FEED_REREAD_MS / 1000} s and keeps only the owners it found`, async () => {
    pages = [page(4n, 'alice', 'bob'), page(6n, 'carol'), page(6n)];
    owners.onApplicationBootstrap();
    await reads(3);
    expect(owners.knownWithout('bob')).toBe(false);
    // Bob's subscription, and carol's (the highest version read), were deleted since.
    pages = [page(4n, 'alice'), page(6n)];
    const before = ownersSince.mock.calls.length;
    later(FEED_REREAD_MS);
    await reads(before + 2);
    expect(ownersSince.mock.calls.slice(before, before + 2)).toEqual([
      [-1n, FEED_MAX_OWNERS + 1],
      [6n, FEED_MAX_OWNERS + 1],
    ]);
    expect(owners.knownWithout('bob')).toBe(true);
    expect(owners.knownWithout('carol')).toBe(true);
    expect(owners.knownWithout('alice')).toBe(false);
    // And then the poll's reads of what is new, until the next one.
    await reads(before + 4);
    expect(ownersSince.mock.calls.slice(before + 1).every(([after]) => after === 6n)).toBe(true);
  });

  it('keeps an owner it announced while a read of every subscription was under way, which may not see it', async () => {
    owners.onApplicationBootstrap();
    await reads(1);
    let answer!: (page: FeedPage) => void;
    ownersSince.mockImplementationOnce(() => new Promise<FeedPage>((resolve) => (answer = resolve)));
    later(FEED_REREAD_MS);
    const before = ownersSince.mock.calls.length;
    await reads(before + 1);
    expect(ownersSince.mock.calls[before]).toEqual([-1n, FEED_MAX_OWNERS + 1]);
    void owners.subscribed('dave');
    answer(page(4n, 'alice'));
    await sleep(5);
    expect(owners.knownWithout('dave')).toBe(false);
    expect(owners.knownWithout('alice')).toBe(false);
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
