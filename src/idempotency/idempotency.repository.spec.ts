import { Database } from '../database';
import { testDatabases } from '../../test/utils/databases';
import { RepositoryDatabase, startRepositoryDatabase } from '../../test/utils/repository-database';
import { IdempotencyRepository } from './idempotency.repository';

const ref = { owner: 'alice', key: 'k-1' };
const HOUR = 3_600_000;
const answer = { statusCode: 200, response: '{"id":1}' };

describe.each(testDatabases())(`${IdempotencyRepository.name} on %s`, (name) => {
  let db: RepositoryDatabase;
  let keys: IdempotencyRepository;

  beforeAll(async () => {
    db = await startRepositoryDatabase(name, [IdempotencyRepository]);
    keys = db.get(IdempotencyRepository);
  });
  afterAll(() => db.close());
  beforeEach(() => db.clear('idempotency_keys'));

  /** A key whose row is already past its lease and its expiry, by the database's clock. */
  const insertExpired = (key = ref, claim = 'old') => keys.insert(key, 'f-old', claim, -1000, -1000);

  describe('insert', () => {
    it('takes a new key, in flight and leased; the same key again (same owner) is refused', async () => {
      await expect(keys.insert(ref, 'f1', 'c1', HOUR, HOUR)).resolves.toBe(true);
      await expect(keys.find(ref)).resolves.toEqual({
        fingerprint: 'f1',
        statusCode: null,
        response: null,
        leaseExpired: false,
        expired: false,
      });
      await expect(keys.insert(ref, 'f2', 'c2', HOUR, HOUR)).resolves.toBe(false);
      await expect(keys.find(ref)).resolves.toMatchObject({ fingerprint: 'f1' });
    });

    it("keeps each owner's keys apart", async () => {
      await expect(keys.insert(ref, 'f1', 'c1', HOUR, HOUR)).resolves.toBe(true);
      await expect(keys.insert({ owner: 'bob', key: ref.key }, 'f2', 'c2', HOUR, HOUR)).resolves.toBe(true);
    });

    it('keeps the row at least as long as the lease, whatever the TTL', async () => {
      await keys.insert(ref, 'f1', 'c1', HOUR, -1000);
      await expect(keys.find(ref)).resolves.toMatchObject({ leaseExpired: false, expired: false });
    });
  });

  describe('find', () => {
    it('judges lease and expiry on the database clock', async () => {
      await keys.insert(ref, 'f1', 'c1', -1000, HOUR);
      await expect(keys.find(ref)).resolves.toMatchObject({ leaseExpired: true, expired: false });
      await insertExpired({ owner: 'alice', key: 'k-2' });
      await expect(keys.find({ owner: 'alice', key: 'k-2' })).resolves.toMatchObject({
        leaseExpired: true,
        expired: true,
      });
    });

    it('finds nothing for a key never taken', async () => {
      await expect(keys.find(ref)).resolves.toBeUndefined();
    });
  });

  describe('takeOver', () => {
    it('takes an expired key, or one whose holder ran out of lease, as new', async () => {
      await insertExpired();
      await expect(keys.takeOver(ref, 'f2', 'c2', HOUR, HOUR)).resolves.toBe(true);
      await expect(keys.find(ref)).resolves.toEqual({
        fingerprint: 'f2',
        statusCode: null,
        response: null,
        leaseExpired: false,
        expired: false,
      });
      await keys.insert({ owner: 'alice', key: 'k-2' }, 'f1', 'c1', -1000, HOUR);
      await expect(keys.takeOver({ owner: 'alice', key: 'k-2' }, 'f2', 'c2', HOUR, HOUR)).resolves.toBe(true);
    });

    it('leaves a key still held, or answered and not expired, alone', async () => {
      await keys.insert(ref, 'f1', 'c1', HOUR, HOUR);
      await expect(keys.takeOver(ref, 'f2', 'c2', HOUR, HOUR)).resolves.toBe(false);
      await keys.insert({ owner: 'alice', key: 'k-2' }, 'f1', 'c1', -1000, HOUR);
      await keys.complete({ owner: 'alice', key: 'k-2' }, 'c1', answer, HOUR);
      await expect(keys.takeOver({ owner: 'alice', key: 'k-2' }, 'f2', 'c2', HOUR, HOUR)).resolves.toBe(false);
      await expect(keys.find(ref)).resolves.toMatchObject({ fingerprint: 'f1' });
    });
  });

  describe('complete', () => {
    it('stores the answer of the request that holds the key, and only of that one', async () => {
      await keys.insert(ref, 'f1', 'c1', HOUR, HOUR);
      await expect(keys.complete(ref, 'someone-else', answer, HOUR)).resolves.toBe(false);
      await expect(keys.find(ref)).resolves.toMatchObject({ statusCode: null, response: null });
      await expect(keys.complete(ref, 'c1', answer, HOUR)).resolves.toBe(true);
      await expect(keys.find(ref)).resolves.toEqual({
        fingerprint: 'f1',
        statusCode: 200,
        response: '{"id":1}',
        leaseExpired: false,
        expired: false,
      });
      // The claim is given up with the answer: nothing completes it a second time.
      await expect(keys.complete(ref, 'c1', { statusCode: 409, response: '{}' }, HOUR)).resolves.toBe(false);
    });

    it("joins an open transaction: the answer is rolled back with the request's own writes", async () => {
      await keys.insert(ref, 'f1', 'c1', HOUR, HOUR);
      const failed = db.get(Database).transaction(async () => {
        await keys.complete(ref, 'c1', answer, HOUR);
        throw new Error('the plant could not be written');
      });
      await expect(failed).rejects.toThrow('the plant could not be written');
      await expect(keys.find(ref)).resolves.toMatchObject({ statusCode: null, response: null });
    });
  });

  describe('release', () => {
    it('frees the key only for the request that holds it', async () => {
      await keys.insert(ref, 'f1', 'c1', HOUR, HOUR);
      await keys.release(ref, 'someone-else');
      await expect(keys.find(ref)).resolves.toBeDefined();
      await keys.release(ref, 'c1');
      await expect(keys.find(ref)).resolves.toBeUndefined();
    });
  });

  describe('sealed answers', () => {
    /** A key of `owner` answered with `response`, expiring in `ttlMs`. */
    const answered = async (owner: string, key: string, response: string, ttlMs = HOUR) => {
      await keys.insert({ owner, key }, 'f', 'c', HOUR, HOUR);
      await keys.complete({ owner, key }, 'c', { statusCode: 201, response }, ttlMs);
    };

    it('lists in key order after a cursor the unexpired sealed answers not under a prefix', async () => {
      await answered('bob', 'k1', 'sealed:v1.old.b1');
      await answered('alice', 'k2', 'sealed:v1.old.a2');
      await answered('alice', 'k1', 'sealed:v1.old.a1');
      await answered('alice', 'k3', 'sealed:v1.new.a3');
      await answered('alice', 'k4', '{"id":1}');
      await answered('carol', 'k1', 'sealed:v1.old.c1', -1000);
      await keys.insert({ owner: 'dave', key: 'k1' }, 'f', 'c', HOUR, HOUR);

      await expect(keys.sealedAnswers('sealed:', 'v1.new.', undefined, 2)).resolves.toEqual([
        { ref: { owner: 'alice', key: 'k1' }, response: 'sealed:v1.old.a1' },
        { ref: { owner: 'alice', key: 'k2' }, response: 'sealed:v1.old.a2' },
      ]);
      await expect(keys.sealedAnswers('sealed:', 'v1.new.', { owner: 'alice', key: 'k2' }, 2)).resolves.toEqual([
        { ref: { owner: 'bob', key: 'k1' }, response: 'sealed:v1.old.b1' },
      ]);
    });

    it('replaces an answer only while it is unchanged', async () => {
      await answered('alice', 'k1', 'sealed:v1.old.a1');
      const ref1 = { owner: 'alice', key: 'k1' };
      await expect(keys.replaceAnswer(ref1, 'sealed:v1.old.zz', 'sealed:v1.new.x')).resolves.toBe(false);
      await expect(keys.replaceAnswer(ref1, 'sealed:v1.old.a1', 'sealed:v1.new.a1')).resolves.toBe(true);
      await expect(keys.find(ref1)).resolves.toMatchObject({ statusCode: 201, response: 'sealed:v1.new.a1' });
    });
  });

  describe('purgeExpired', () => {
    it('deletes up to `limit` expired keys, and how many went; keys still valid stay', async () => {
      for (let i = 0; i < 5; i++) await insertExpired({ owner: 'alice', key: `old-${i}` });
      await keys.insert(ref, 'f1', 'c1', HOUR, HOUR);
      await expect(keys.purgeExpired(3)).resolves.toBe(3);
      await expect(keys.purgeExpired(3)).resolves.toBe(2);
      await expect(keys.purgeExpired(3)).resolves.toBe(0);
      await expect(keys.find(ref)).resolves.toBeDefined();
    });

    it('deletes the oldest expiry first', async () => {
      await keys.insert({ owner: 'alice', key: 'older' }, 'f', 'c', -5000, -5000);
      await keys.insert({ owner: 'alice', key: 'newer' }, 'f', 'c', -1000, -1000);
      await expect(keys.purgeExpired(1)).resolves.toBe(1);
      await expect(keys.find({ owner: 'alice', key: 'older' })).resolves.toBeUndefined();
      await expect(keys.find({ owner: 'alice', key: 'newer' })).resolves.toBeDefined();
    });
  });
});
