import { BadRequestException, ConflictException, HttpException, ServiceUnavailableException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { Database, READ_COMMITTED, WRITE } from '../database';
import { SecretBox } from '../secrets/secret-box';
import { SecretsService } from '../secrets/secrets.service';
import { MOMENTARY } from './final-answer';
import { IdempotencyKeyInFlight, IdempotencyKeyReused, IdempotentAnswerUnavailable } from './idempotency.errors';
import { IdempotencyRepository, KeyRow } from './idempotency.repository';
import { HeldKey, IdempotencyService } from './idempotency.service';
import { IN_FLIGHT_LEASE_MS, PURGE_BATCH, PURGE_INTERVAL_MS } from './idempotency.limits';

const KEY = Buffer.alloc(32, 7);

class HostLookupFailed extends BadRequestException {
  readonly [MOMENTARY] = true;
}
const TTL = 3_600_000;
const ref = { owner: 'alice', key: 'k-1' };
const plainRoute = { successStatus: 200, sealSuccess: false };
const sealedRoute = { successStatus: 201, sealSuccess: true };

const repository = {
  insert: jest.fn(),
  find: jest.fn(),
  takeOver: jest.fn(),
  complete: jest.fn(),
  release: jest.fn(),
  purgeExpired: jest.fn(),
};

/** A transaction that records which repository calls ran inside it. */
let inTransaction = false;
const database = { transaction: jest.fn() };
async function transaction(work: () => Promise<unknown>): Promise<unknown> {
  inTransaction = true;
  try {
    return await work();
  } finally {
    inTransaction = false;
  }
}

const row = (fields: Partial<KeyRow>): KeyRow => ({
  fingerprint: 'f1',
  statusCode: null,
  response: null,
  leaseExpired: false,
  expired: false,
  ...fields,
});

async function service(keys: Buffer[] = [KEY]): Promise<IdempotencyService> {
  const config = { idempotency: { ttlMs: TTL }, secrets: { keys } } as Record<string, unknown>;
  const moduleRef = await Test.createTestingModule({
    providers: [
      IdempotencyService,
      SecretsService,
      { provide: IdempotencyRepository, useValue: repository },
      { provide: Database, useValue: database },
      { provide: ConfigService, useValue: { get: (name: string) => config[name] } },
    ],
  }).compile();
  return moduleRef.get(IdempotencyService);
}

async function proceed(s: IdempotencyService, route = plainRoute): Promise<HeldKey> {
  const begun = await s.begin(ref, 'f1', route);
  if (begun.kind !== 'proceed') throw new Error('expected to proceed');
  return begun.held;
}

describe(IdempotencyService.name, () => {
  beforeEach(() => {
    jest.resetAllMocks();
    database.transaction.mockImplementation(transaction);
    repository.complete.mockResolvedValue(true);
    repository.release.mockResolvedValue(undefined);
  });

  describe('begin', () => {
    it('takes a new key with one INSERT, leased, kept for the TTL', async () => {
      repository.insert.mockResolvedValue(true);
      const held = await proceed(await service());
      expect(held).toMatchObject({ ref, route: plainRoute });
      expect(repository.insert).toHaveBeenCalledWith(ref, 'f1', held.claim, IN_FLIGHT_LEASE_MS, TTL);
      expect(repository.find).not.toHaveBeenCalled();
    });

    it('replays a stored answer of the same request', async () => {
      repository.insert.mockResolvedValue(false);
      repository.find.mockResolvedValue(row({ statusCode: 200, response: '{"id":1}' }));
      await expect((await service()).begin(ref, 'f1', plainRoute)).resolves.toEqual({
        kind: 'replay',
        statusCode: 200,
        body: '{"id":1}',
      });
    });

    it('refuses another request under the same key with 422, answered or in flight', async () => {
      repository.insert.mockResolvedValue(false);
      const s = await service();
      for (const fields of [{ statusCode: 200, response: '{}' }, {}]) {
        repository.find.mockResolvedValueOnce(row({ ...fields, fingerprint: 'other' }));
        await expect(s.begin(ref, 'f1', plainRoute)).rejects.toEqual(new IdempotencyKeyReused());
      }
    });

    it('answers 409 while the first request still holds its lease', async () => {
      repository.insert.mockResolvedValue(false);
      repository.find.mockResolvedValue(row({}));
      await expect((await service()).begin(ref, 'f1', plainRoute)).rejects.toEqual(new IdempotencyKeyInFlight());
      expect(repository.takeOver).not.toHaveBeenCalled();
    });

    it('takes over a key whose holder died (lease out), or whose answer expired, whatever request it was', async () => {
      repository.insert.mockResolvedValue(false);
      repository.takeOver.mockResolvedValue(true);
      const s = await service();
      repository.find.mockResolvedValueOnce(row({ leaseExpired: true }));
      await expect(s.begin(ref, 'f1', plainRoute)).resolves.toMatchObject({ kind: 'proceed' });
      repository.find.mockResolvedValueOnce(row({ expired: true, fingerprint: 'other', statusCode: 200 }));
      await expect(s.begin(ref, 'f1', plainRoute)).resolves.toMatchObject({ kind: 'proceed' });
      expect(repository.takeOver).toHaveBeenCalledTimes(2);
    });

    it('looks again when another request took the key over first, and tries a key deleted meanwhile again', async () => {
      repository.insert.mockResolvedValueOnce(false).mockResolvedValueOnce(false).mockResolvedValueOnce(true);
      repository.find.mockResolvedValueOnce(row({ leaseExpired: true })).mockResolvedValueOnce(undefined);
      repository.takeOver.mockResolvedValue(false);
      await expect((await service()).begin(ref, 'f1', plainRoute)).resolves.toMatchObject({ kind: 'proceed' });
      expect(repository.insert).toHaveBeenCalledTimes(3);
    });

    it('gives up with 409 in flight when the key keeps changing hands', async () => {
      repository.insert.mockResolvedValue(false);
      repository.find.mockResolvedValue(row({ leaseExpired: true }));
      repository.takeOver.mockResolvedValue(false);
      await expect((await service()).begin(ref, 'f1', plainRoute)).rejects.toBeInstanceOf(ConflictException);
      expect(repository.insert).toHaveBeenCalledTimes(3);
    });
  });

  describe('storing answers', () => {
    it('runs the work and stores its answer in one transaction, run again whole after a deadlock', async () => {
      repository.insert.mockResolvedValue(true);
      repository.complete.mockImplementation(async () => inTransaction);
      const s = await service();
      const held = await proceed(s);
      const work = jest.fn(async () => {
        expect(inTransaction).toBe(true);
        return { id: 9223372036854775807n, name: 'Fern' };
      });
      await expect(s.succeed(held, work)).resolves.toEqual({ id: 9223372036854775807n, name: 'Fern' });
      expect(repository.complete).toHaveBeenCalledWith(
        ref,
        held.claim,
        { statusCode: 200, response: '{"id":9223372036854775807,"name":"Fern"}' },
        TTL,
      );
      expect(database.transaction).toHaveBeenCalledWith(expect.any(Function), {
        retry: WRITE,
        isolation: READ_COMMITTED,
      });
    });

    it('fails the transaction when the key was taken over meanwhile', async () => {
      repository.insert.mockResolvedValue(true);
      repository.complete.mockResolvedValue(false);
      const s = await service();
      const held = await proceed(s);
      await expect(s.succeed(held, async () => ({ id: 1 }))).rejects.toEqual(new IdempotencyKeyInFlight());
    });

    it('stores nothing when the work fails', async () => {
      repository.insert.mockResolvedValue(true);
      const s = await service();
      const held = await proceed(s);
      await expect(s.succeed(held, () => Promise.reject(new ConflictException('taken')))).rejects.toThrow('taken');
      expect(repository.complete).not.toHaveBeenCalled();
    });

    it('seals the answer of a route that carries a secret, and opens it to replay it', async () => {
      repository.insert.mockResolvedValue(true);
      const s = await service();
      const held = await proceed(s, sealedRoute);
      await s.succeed(held, async () => ({ secret: 'whsec_abc' }));
      const stored = repository.complete.mock.calls[0][2] as { statusCode: number; response: string };
      expect(stored.statusCode).toBe(201);
      expect(stored.response).not.toContain('whsec_abc');
      expect(new SecretBox([KEY]).open(stored.response.replace(/^sealed:/, ''))).toBe('{"secret":"whsec_abc"}');

      repository.insert.mockResolvedValue(false);
      repository.find.mockResolvedValue(row({ statusCode: 201, response: stored.response }));
      await expect(s.begin(ref, 'f1', sealedRoute)).resolves.toEqual({
        kind: 'replay',
        statusCode: 201,
        body: '{"secret":"whsec_abc"}',
      });
    });

    it('answers 422 "no longer available" for a stored answer sealed under a key it no longer holds', async () => {
      const retired = Buffer.alloc(32, 3);
      const sealed = `sealed:${new SecretBox([retired]).seal('{"secret":"whsec_abc"}')}`;
      repository.insert.mockResolvedValue(false);
      repository.find.mockResolvedValue(row({ statusCode: 201, response: sealed }));
      const s = await service([KEY]);
      const replay = s.begin(ref, 'f1', sealedRoute);
      await expect(replay).rejects.toEqual(new IdempotentAnswerUnavailable());
      await expect(replay).rejects.toHaveProperty('status', 422);
      expect(repository.takeOver).not.toHaveBeenCalled();
      expect(repository.release).not.toHaveBeenCalled();
    });

    it('stores a client error as the {error, message} the filter writes', async () => {
      repository.insert.mockResolvedValue(true);
      const s = await service();
      const held = await proceed(s);
      await s.failed(held, new BadRequestException(['id must be an integer', 'name must not be blank']));
      expect(repository.complete).toHaveBeenCalledWith(
        ref,
        held.claim,
        { statusCode: 400, response: '{"error":400,"message":"id must be an integer; name must not be blank"}' },
        TTL,
      );
      expect(repository.release).not.toHaveBeenCalled();
    });

    it.each([
      ['a 503', new ServiceUnavailableException('down')],
      ['an unexpected error', new Error('boom')],
      ['a 429', new HttpException('Too Many Requests', 429)],
      ['a 400 about the moment', new HostLookupFailed('url host hooks.example.com does not resolve')],
    ])('frees the key after %s, so a retry runs again', async (_name, error) => {
      repository.insert.mockResolvedValue(true);
      const s = await service();
      const held = await proceed(s);
      await s.failed(held, error);
      expect(repository.release).toHaveBeenCalledWith(ref, held.claim);
      expect(repository.complete).not.toHaveBeenCalled();
    });

    it('leaves a key it could not free to its lease, without failing the answer', async () => {
      repository.insert.mockResolvedValue(true);
      repository.release.mockRejectedValue(new Error('database gone'));
      const s = await service();
      await expect(s.failed(await proceed(s), new Error('boom'))).resolves.toBeUndefined();
    });
  });

  describe('purge', () => {
    afterEach(() => jest.useRealTimers());

    it('deletes expired keys in bounded batches until fewer than a batch are left', async () => {
      repository.purgeExpired.mockResolvedValueOnce(PURGE_BATCH).mockResolvedValueOnce(3);
      await expect((await service()).purge()).resolves.toBe(PURGE_BATCH + 3);
      expect(repository.purgeExpired).toHaveBeenCalledTimes(2);
      expect(repository.purgeExpired).toHaveBeenCalledWith(PURGE_BATCH);
    });

    it('runs in the background once an interval, the first keyed request only starting the clock', async () => {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
      repository.insert.mockResolvedValue(true);
      repository.purgeExpired.mockResolvedValue(0);
      const s = await service();
      await s.begin(ref, 'f1', plainRoute);
      await s.begin(ref, 'f1', plainRoute);
      expect(repository.purgeExpired).not.toHaveBeenCalled();
      jest.advanceTimersByTime(PURGE_INTERVAL_MS);
      await s.begin(ref, 'f1', plainRoute);
      await s.begin(ref, 'f1', plainRoute);
      expect(repository.purgeExpired).toHaveBeenCalledTimes(1);
    });
  });
});
