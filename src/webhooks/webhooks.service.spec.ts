import { BadRequestException, ConflictException, NotFoundException, ServiceUnavailableException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import dns from 'node:dns';
import { expectedCreatedWebhook, expectedWebhook } from '../../test/utils/bodies';
import { loadConfig } from '../config/configuration';
import { isFinalRefusal } from '../idempotency/final-answer';
import { SecretBox } from '../secrets/secret-box';
import { SecretsService } from '../secrets/secrets.service';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { AttemptRow } from './deliveries/claims';
import { DeliveriesRepository } from './deliveries/deliveries.repository';
import { EventsRepository } from './events/events.repository';
import { NewSubscription, SubscriptionRow, SubscriptionsRepository } from './subscriptions/subscriptions.repository';
import { SubscribedOwners } from './subscriptions/subscribed-owners';
import { TooManySubscriptions, WebhookHostUnresolved, WebhookNotFound } from './webhooks.errors';
import { MAX_SUBSCRIPTIONS_PER_OWNER } from './webhooks.limits';
import { WebhooksService } from './webhooks.service';
import { RECENT_ATTEMPTS } from './webhooks.limits';
import { MAX_SUBSCRIPTION_ID } from './subscriptions/subscription-id';

const KEY = randomBytes(32);
const WITH_KEY = { WEBHOOK_SECRET_KEY: KEY.toString('base64') };
/** Lets the create tests use a loopback URL, so no DNS is needed. */
const ANY_URL = { ...WITH_KEY, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
const WEBHOOK_URL = 'http://127.0.0.1:9/x';

function dto(fields: Partial<CreateWebhookDto> = {}): CreateWebhookDto {
  return Object.assign(new CreateWebhookDto(), { url: WEBHOOK_URL, events: ['plant.created'], ...fields });
}

type Repository = Record<
  'insertSubscription' | 'listSubscriptions' | 'findSubscription' | 'deleteSubscription' | 'recentAttempts',
  jest.Mock
>;

describe(WebhooksService.name, () => {
  let repository: Repository;
  /** Owners announced as subscribed (the 201 waits for SubscribedOwners.subscribed). */
  let subscribed: jest.Mock;

  beforeEach(() => {
    repository = {
      insertSubscription: jest.fn().mockResolvedValue(true),
      listSubscriptions: jest.fn().mockResolvedValue([]),
      findSubscription: jest.fn().mockResolvedValue(42n),
      deleteSubscription: jest.fn().mockResolvedValue(true),
      recentAttempts: jest.fn().mockResolvedValue([]),
    };
    subscribed = jest.fn().mockResolvedValue(undefined);
  });

  async function build(env: Record<string, string>): Promise<WebhooksService> {
    const moduleRef = await Test.createTestingModule({
      providers: [
        WebhooksService,
        // One mock for the three: each method is on one of them.
        { provide: SubscriptionsRepository, useValue: repository },
        { provide: DeliveriesRepository, useValue: repository },
        { provide: EventsRepository, useValue: repository },
        { provide: SubscribedOwners, useValue: { subscribed } },
        { provide: ConfigService, useValue: new ConfigService(loadConfig(env)) },
        SecretsService,
      ],
    }).compile();
    return moduleRef.get(WebhooksService);
  }

  const untouched = () => {
    for (const method of Object.values(repository)) expect(method).not.toHaveBeenCalled();
  };

  describe('create', () => {
    it.each([
      ['an http URL', 'http://hooks.example.com/x', 'url must use https'],
      ['a loopback address', 'https://127.0.0.1/x', 'url resolves to 127.0.0.1, a loopback address'],
      ['a private address', 'https://10.1.2.3/x', 'url resolves to 10.1.2.3, a private address'],
      ['a metadata address', 'https://[fd00:ec2::254]/x', 'url resolves to fd00:ec2::254, a metadata address'],
    ])('refuses %s by default with a 400, before the repository', async (_label, url, message) => {
      const service = await build(WITH_KEY);
      const created = service.create('alice', dto({ url }));
      await expect(created).rejects.toBeInstanceOf(BadRequestException);
      await expect(created).rejects.toThrow(message);
      untouched();
    });

    it('refuses a host that does not resolve with a 400 marked as about the moment, not kept for a retry', async () => {
      const lookup = jest
        .spyOn(dns.promises, 'lookup')
        .mockRejectedValue(Object.assign(new Error('getaddrinfo EAI_AGAIN hooks.example.com'), { code: 'EAI_AGAIN' }));
      try {
        const service = await build(WITH_KEY);
        const created = service.create('alice', dto({ url: 'https://hooks.example.com/x' }));
        await expect(created).rejects.toBeInstanceOf(WebhookHostUnresolved);
        await expect(created).rejects.toThrow('url host hooks.example.com does not resolve');
        await expect(created.catch((error: unknown) => isFinalRefusal(error))).resolves.toBe(false);
        untouched();
      } finally {
        lookup.mockRestore();
      }
    });

    it(`refuses the ${MAX_SUBSCRIPTIONS_PER_OWNER + 1}th subscription of a user with a 409`, async () => {
      const service = await build(ANY_URL);
      // The repository inserts only below the limit, in the same statement that counts.
      repository.insertSubscription.mockResolvedValue(false);
      const created = service.create('alice', dto());
      await expect(created).rejects.toBeInstanceOf(ConflictException);
      await expect(created).rejects.toThrow(new TooManySubscriptions().message);
      expect(repository.insertSubscription).toHaveBeenCalledWith(
        expect.objectContaining({ owner: 'alice' }),
        MAX_SUBSCRIPTIONS_PER_OWNER,
      );
      expect(subscribed).not.toHaveBeenCalled();
    });

    it('answers once every instance knows the owner has a subscription, not before', async () => {
      const service = await build(ANY_URL);
      let known!: () => void;
      subscribed.mockReturnValue(new Promise<void>((resolve) => (known = resolve)));
      let answered = false;
      const created = service.create('alice', dto()).then(() => (answered = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(subscribed).toHaveBeenCalledWith('alice');
      expect(answered).toBe(false);
      known();
      await created;
      expect(answered).toBe(true);
    });

    it('stores the secret sealed under the key and returns it in clear, once', async () => {
      const service = await build(ANY_URL);
      const before = Date.now();
      const created = await service.create(
        'alice',
        dto({ events: ['plant.deleted', 'plant.created', 'plant.deleted'], description: 'Inventory sync' }),
      );

      expect(repository.insertSubscription).toHaveBeenCalledTimes(1);
      const row = repository.insertSubscription.mock.calls[0][0] as NewSubscription;
      expect(row).toEqual({
        id: expect.any(BigInt),
        owner: 'alice',
        url: WEBHOOK_URL,
        events: ['plant.deleted', 'plant.created'],
        description: 'Inventory sync',
        sealedSecret: expect.any(String),
        createdAt: expect.any(Number),
      });
      expect(row.id).toBeGreaterThan(0n);
      expect(row.id).toBeLessThanOrEqual(MAX_SUBSCRIPTION_ID);
      expect(row.createdAt).toBeGreaterThanOrEqual(before);
      expect(created).toStrictEqual(
        expectedCreatedWebhook({
          id: row.id,
          url: WEBHOOK_URL,
          events: ['plant.deleted', 'plant.created'],
          description: 'Inventory sync',
          createdAt: new Date(row.createdAt).toISOString(),
          secret: created.secret,
        }),
      );
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(row.sealedSecret).not.toBe(created.secret);
      expect(row.sealedSecret).not.toContain(created.secret.slice('whsec_'.length));
      expect(new SecretBox([KEY]).open(row.sealedSecret)).toBe(created.secret);
    });

    it('leaves out a missing description', async () => {
      const service = await build(ANY_URL);
      const created = await service.create('alice', dto());
      expect(created).not.toHaveProperty('description');
      expect(repository.insertSubscription).toHaveBeenCalledWith(
        expect.objectContaining({ description: null }),
        MAX_SUBSCRIPTIONS_PER_OWNER,
      );
    });

    it('tries once more with a new id when the id is taken', async () => {
      const service = await build(ANY_URL);
      // The service reuses the row object, so each id is read when it is inserted.
      const ids: bigint[] = [];
      repository.insertSubscription
        .mockImplementationOnce(async (row: NewSubscription) => {
          ids.push(row.id);
          throw { code: 'ER_DUP_ENTRY' };
        })
        .mockImplementationOnce(async (row: NewSubscription) => {
          ids.push(row.id);
          return true;
        });

      const created = await service.create('alice', dto());
      expect(repository.insertSubscription).toHaveBeenCalledTimes(2);
      expect(ids[1]).not.toBe(ids[0]);
      expect(created.id).toBe(ids[1]);
    });

    it('gives up after the second unique violation', async () => {
      const service = await build(ANY_URL);
      const error = { code: 'ER_DUP_ENTRY' };
      repository.insertSubscription.mockRejectedValue(error);
      await expect(service.create('alice', dto())).rejects.toBe(error);
      expect(repository.insertSubscription).toHaveBeenCalledTimes(2);
    });

    it('does not retry any other error', async () => {
      const service = await build(ANY_URL);
      const error = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      repository.insertSubscription.mockRejectedValue(error);
      await expect(service.create('alice', dto())).rejects.toBe(error);
      expect(repository.insertSubscription).toHaveBeenCalledTimes(1);
    });
  });

  describe('list', () => {
    it('shows each subscription with whether it is enabled, and why not', async () => {
      const service = await build(WITH_KEY);
      const rows: SubscriptionRow[] = [
        {
          id: 1n,
          url: 'https://a.example/x',
          events: ['plant.created'],
          description: null,
          createdAt: Date.UTC(2026, 0, 1),
          disabledAt: null,
          disabledReason: null,
          previousSecretExpiresAt: null,
        },
        {
          id: 2n ** 63n - 1n,
          url: 'https://b.example/x',
          events: ['plant.created', 'plant.deleted'],
          description: 'gone',
          createdAt: Date.UTC(2026, 0, 2),
          disabledAt: Date.UTC(2026, 0, 3),
          disabledReason: 'the endpoint answered 410 Gone',
          previousSecretExpiresAt: Date.UTC(2026, 0, 4),
        },
      ];
      repository.listSubscriptions.mockResolvedValue(rows);

      await expect(service.list('alice')).resolves.toStrictEqual([
        expectedWebhook({
          id: 1n,
          url: 'https://a.example/x',
          events: ['plant.created'],
          createdAt: '2026-01-01T00:00:00.000Z',
        }),
        expectedWebhook({
          id: 2n ** 63n - 1n,
          url: 'https://b.example/x',
          events: ['plant.created', 'plant.deleted'],
          description: 'gone',
          createdAt: '2026-01-02T00:00:00.000Z',
          enabled: false,
          disabledAt: '2026-01-03T00:00:00.000Z',
          disabledReason: 'the endpoint answered 410 Gone',
          previousSecretExpiresAt: '2026-01-04T00:00:00.000Z',
        }),
      ]);
      expect(repository.listSubscriptions).toHaveBeenCalledWith('alice');
    });
  });

  describe('remove', () => {
    it("deletes the caller's subscription", async () => {
      const service = await build(WITH_KEY);
      await expect(service.remove('alice', 42n)).resolves.toBeUndefined();
      expect(repository.deleteSubscription).toHaveBeenCalledWith('alice', 42n);
    });

    it('answers 404 when the repository deleted nothing', async () => {
      const service = await build(WITH_KEY);
      repository.deleteSubscription.mockResolvedValue(false);
      const removed = service.remove('alice', 42n);
      await expect(removed).rejects.toBeInstanceOf(NotFoundException);
      await expect(removed).rejects.toThrow(new WebhookNotFound(42n).message);
    });
  });

  describe('deliveries', () => {
    it('answers 404 for a subscription the caller does not have, without reading attempts', async () => {
      const service = await build(WITH_KEY);
      repository.findSubscription.mockResolvedValue(undefined);
      const deliveries = service.deliveries('alice', 42n);
      await expect(deliveries).rejects.toBeInstanceOf(NotFoundException);
      await expect(deliveries).rejects.toThrow(new WebhookNotFound(42n).message);
      expect(repository.findSubscription).toHaveBeenCalledWith('alice', 42n);
      expect(repository.recentAttempts).not.toHaveBeenCalled();
    });

    it('shows the recent attempts with the webhook-id receivers see (a delivery recorded before events were: its own), and only the fields that have a value', async () => {
      const service = await build(WITH_KEY);
      const attempts: AttemptRow[] = [
        {
          deliveryId: 2n ** 60n + 1n,
          eventId: null,
          type: 'plant.deleted',
          attempt: 2,
          statusCode: null,
          error: 'timeout after 10000 ms',
          attemptedAt: Date.UTC(2026, 10, 24, 9, 30, 1, 250),
          durationMs: 10_000,
        },
        {
          deliveryId: 7n,
          eventId: 1842n,
          type: 'plant.created',
          attempt: 1,
          statusCode: 500,
          error: null,
          attemptedAt: Date.UTC(2026, 10, 24, 9, 30),
          durationMs: 84,
        },
      ];
      repository.recentAttempts.mockResolvedValue(attempts);
      // The subscription's key, which its attempts are recorded under, may differ from the id in the path.
      repository.findSubscription.mockResolvedValue(5731960143207412291n);

      await expect(service.deliveries('alice', 42n)).resolves.toStrictEqual([
        {
          eventId: 'msg_1152921504606846977',
          type: 'plant.deleted',
          attempt: 2,
          error: 'timeout after 10000 ms',
          attemptedAt: '2026-11-24T09:30:01.250Z',
          durationMs: 10_000,
        },
        {
          eventId: 'evt_1842',
          type: 'plant.created',
          attempt: 1,
          statusCode: 500,
          attemptedAt: '2026-11-24T09:30:00.000Z',
          durationMs: 84,
        },
      ]);
      expect(repository.recentAttempts).toHaveBeenCalledWith(5731960143207412291n, RECENT_ATTEMPTS);
    });
  });

  describe('without WEBHOOK_SECRET_KEY', () => {
    it.each([
      ['create', (service: WebhooksService) => service.create('alice', dto())],
      ['list', (service: WebhooksService) => service.list('alice')],
      ['remove', (service: WebhooksService) => service.remove('alice', 42n)],
      ['deliveries', (service: WebhooksService) => service.deliveries('alice', 42n)],
    ])('%s answers 503 naming the variable, without the repository', async (_method, call) => {
      const service = await build({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
      const answer = call(service);
      await expect(answer).rejects.toBeInstanceOf(ServiceUnavailableException);
      await expect(answer).rejects.toThrow(/WEBHOOK_SECRET_KEY/);
      untouched();
    });
  });
});
