import { Test } from '@nestjs/testing';
import { Condition, Database } from '../../database';
import { EventOutbox } from './event-outbox.service';
import { EventsRepository } from './events.repository';
import { SubscribedOwners } from '../subscriptions/subscribed-owners';
import { examplePlant, plantText } from '../../../test/utils/bodies';
import { PlantDto } from '../../plants/dto/plant.dto';

/** A created plant as the service hands it to the outbox. */
const FERN = examplePlant({ id: 7n, name: 'Fern' }) as unknown as PlantDto;
const IVY = examplePlant({ id: 9n, name: 'Ivy' }) as unknown as PlantDto;

/** The step the conditional statement of an owner's change shows as (the condition is the repository's). */
const UNWATCHED = 'write if condition';

describe(EventOutbox.name, () => {
  let outbox: EventOutbox;
  let database: { transaction: jest.Mock };
  let repository: { noSubscriptionWants: jest.Mock; recordEvents: jest.Mock; subscriptionWants: jest.Mock };
  /** What happened, in order: the statements the change and the outbox made, and transactions. */
  let steps: string[];

  /** What subscriptionWants answers. */
  let wanted: boolean;
  /** The owners this instance knows, now, to have no subscription (none: it is unsure). */
  let knownWithout: Set<string>;

  beforeEach(async () => {
    steps = [];
    wanted = true;
    knownWithout = new Set();
    database = {
      transaction: jest.fn(async (work: () => Promise<unknown>) => {
        steps.push('begin');
        try {
          const result = await work();
          steps.push('commit');
          return result;
        } catch (error) {
          steps.push('rollback');
          throw error;
        }
      }),
    };
    repository = {
      noSubscriptionWants: jest.fn((owner: string) => ({ sql: 'NOT EXISTS (wanted)', parameters: [owner] })),
      recordEvents: jest.fn(async () => {
        steps.push('record events');
        return 1;
      }),
      subscriptionWants: jest.fn(async () => {
        steps.push('any subscription?');
        return wanted;
      }),
    };
    const moduleRef = await Test.createTestingModule({
      providers: [
        EventOutbox,
        { provide: Database, useValue: database },
        { provide: EventsRepository, useValue: repository },
        { provide: SubscribedOwners, useValue: { knownWithout: (owner: string) => knownWithout.has(owner) } },
      ],
    }).compile();
    outbox = moduleRef.get(EventOutbox);
  });

  /** A change whose statement changes a row when unconditional, and when conditional only if `unwatched`. */
  const writer = (unwatched: boolean, changes = true) =>
    jest.fn(async (onlyIf?: Condition) => {
      steps.push(onlyIf ? UNWATCHED : 'write');
      return onlyIf ? unwatched && changes : changes;
    });

  it('makes the change of an owner known to have no subscription as the plain statement', async () => {
    knownWithout.add('alice');
    const write = writer(false);
    await expect(outbox.change('created', 'alice', FERN, write)).resolves.toBe(true);
    await expect(outbox.change('deleted', 'alice', FERN, writer(false, false))).resolves.toBe(false);
    expect(steps).toEqual(['write', 'write']);
    expect(write).toHaveBeenCalledWith();
    expect(repository.noSubscriptionWants).not.toHaveBeenCalled();
    expect(repository.subscriptionWants).not.toHaveBeenCalled();
  });

  it('makes the change of an owner nobody watches as one conditional statement, recording nothing', async () => {
    const write = writer(true);
    await expect(outbox.change('created', 'alice', FERN, write)).resolves.toBe(true);
    expect(steps).toEqual([UNWATCHED]);
    expect(write).toHaveBeenCalledWith({ sql: 'NOT EXISTS (wanted)', parameters: ['alice'] });
    expect(repository.noSubscriptionWants).toHaveBeenCalledWith('alice', ['plant.created']);
    expect(repository.recordEvents).not.toHaveBeenCalled();
  });

  it('records the events first, then makes the change, in one transaction, when a subscription wants them', async () => {
    const write = writer(false);
    await expect(outbox.change('created', 'alice', FERN, write)).resolves.toBe(true);
    expect(steps).toEqual([UNWATCHED, 'any subscription?', 'begin', 'record events', 'write', 'commit']);
    expect(repository.recordEvents).toHaveBeenCalledWith('alice', [
      { type: 'plant.created', data: plantText({ id: 7n, name: 'Fern' }) },
    ]);
  });

  it('goes straight to the transaction for an owner seen with a subscription, and only for that owner', async () => {
    await outbox.change('deleted', 'alice', { id: 7n }, writer(false));
    steps = [];
    await outbox.change('deleted', 'alice', { id: 8n }, writer(false));
    expect(steps).toEqual(['begin', 'record events', 'write', 'commit']);
    steps = [];
    await outbox.change('deleted', 'bob', { id: 8n }, writer(true));
    expect(steps).toEqual([UNWATCHED]);
  });

  it('tells a missing row from a subscription with one read, and makes the change again without events', async () => {
    wanted = false;
    await expect(outbox.change('deleted', 'alice', { id: 7n }, writer(true, false))).resolves.toBe(false);
    expect(steps).toEqual([UNWATCHED, 'any subscription?', 'write']);
    expect(repository.subscriptionWants).toHaveBeenCalledWith('alice', ['plant.deleted']);
  });

  it('rolls the events back and says so when the change changed nothing (a delete of a missing plant)', async () => {
    await expect(outbox.change('deleted', 'alice', { id: 7n }, writer(false, false))).resolves.toBe(false);
    expect(steps).toEqual([UNWATCHED, 'any subscription?', 'begin', 'record events', 'write', 'rollback']);
  });

  it('forgets an owner whose transaction recorded nothing: its subscriptions are gone', async () => {
    await outbox.change('deleted', 'alice', { id: 7n }, writer(false));
    repository.recordEvents.mockResolvedValue(0);
    await outbox.change('deleted', 'alice', { id: 8n }, writer(false));
    steps = [];
    await outbox.change('deleted', 'alice', { id: 9n }, writer(true));
    expect(steps).toEqual([UNWATCHED]);
  });

  it('lets a failure of the change (a duplicate id) roll its events back and reach the caller', async () => {
    const duplicate = Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY' });
    const write = jest.fn(async (onlyIf?: Condition) => {
      if (onlyIf) return false;
      throw duplicate;
    });
    await expect(outbox.change('created', 'alice', FERN, write)).rejects.toBe(duplicate);
    expect(steps).toEqual(['any subscription?', 'begin', 'record events', 'rollback']);
  });

  it('counts the deliveries of committed changes only', async () => {
    expect(outbox.deliveriesRecorded).toBe(0);
    repository.recordEvents.mockResolvedValue(3);
    await outbox.change('created', 'alice', FERN, writer(false));
    await outbox.change('deleted', 'alice', { id: 8n }, writer(false, false));
    await expect(
      outbox.change('created', 'alice', IVY, jest.fn().mockRejectedValue(new Error('lost'))),
    ).rejects.toThrow('lost');
    expect(outbox.deliveriesRecorded).toBe(3);
    await outbox.change('deleted', 'alice', { id: 7n }, writer(false));
    expect(outbox.deliveriesRecorded).toBe(6);
  });
});
