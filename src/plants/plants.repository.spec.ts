import { Condition, Database, isUniqueViolation } from '../database';
import { PlantFields, expectedPlant } from '../../test/utils/bodies';
import { testDatabases } from '../../test/utils/databases';
import { RepositoryDatabase, failureOf, startRepositoryDatabase } from '../../test/utils/repository-database';
import { PlantsRepository } from './plants.repository';

const MAX_INT64 = 9223372036854775807n;
/** A condition with a parameter, as the webhooks' one is: it holds when the parameter is 1. */
const holds = (value: boolean): Condition => ({ sql: '? = 1', parameters: [value ? 1 : 0] });

describe.each(testDatabases())(`${PlantsRepository.name} on %s`, (name) => {
  let db: RepositoryDatabase;
  let plants: PlantsRepository;

  beforeAll(async () => {
    db = await startRepositoryDatabase(name, [PlantsRepository]);
    plants = db.get(PlantsRepository);
  });
  afterAll(() => db.close());
  beforeEach(() => db.clear('plants'));

  /** Inserts the plant as the service does: the row made by the repository, then its INSERT. */
  const insert = (owner: string, plant: PlantFields & { id: bigint }, onlyIf?: Condition) =>
    plants.insert(plants.newRow(owner, plant), onlyIf);
  const seed = async (owner: string, ids: bigint[]) => {
    for (const id of ids) await insert(owner, { id, name: `Plant ${id}` });
  };

  describe('insert', () => {
    it('stores the plant with its exact id, as the API shows it, and says it did', async () => {
      await expect(insert('alice', { id: MAX_INT64, name: 'Fern', tag: 'green' })).resolves.toBe(true);
      await expect(insert('alice', { id: 1n, name: 'Moss' })).resolves.toBe(true);
      await expect(plants.page('alice', 10)).resolves.toStrictEqual([
        expectedPlant({ id: 1n, name: 'Moss' }),
        expectedPlant({ id: MAX_INT64, name: 'Fern', tag: 'green' }),
      ]);
    });

    it("refuses a second plant with the owner's id as a unique violation, and leaves the first as it was", async () => {
      await insert('alice', { id: 7n, name: 'Fern' });
      const duplicate = await failureOf(insert('alice', { id: 7n, name: 'Other' }));
      expect(isUniqueViolation(duplicate)).toBe(true);
      await expect(plants.page('alice', 10)).resolves.toStrictEqual([expectedPlant({ id: 7n, name: 'Fern' })]);
    });

    it('lets another owner use the same id', async () => {
      await insert('alice', { id: 7n, name: 'Fern' });
      await expect(insert('bob', { id: 7n, name: 'Moss' })).resolves.toBe(true);
      await expect(plants.page('bob', 10)).resolves.toStrictEqual([expectedPlant({ id: 7n, name: 'Moss' })]);
    });

    it('inserts only while a condition holds, in the same statement, a duplicate still refused', async () => {
      await expect(insert('alice', { id: 1n, name: 'Fern' }, holds(false))).resolves.toBe(false);
      await expect(insert('alice', { id: 1n, name: 'Fern' }, holds(true))).resolves.toBe(true);
      const duplicate = await failureOf(insert('alice', { id: 1n, name: 'Other' }, holds(true)));
      expect(isUniqueViolation(duplicate)).toBe(true);
      await expect(plants.page('alice', 10)).resolves.toStrictEqual([expectedPlant({ id: 1n, name: 'Fern' })]);
    });

    it('joins an open transaction: rolled back with it', async () => {
      const database = db.get(Database);
      const failed = database.transaction(async () => {
        await insert('alice', { id: 1n, name: 'Fern' });
        throw new Error('the work after the insert failed');
      });
      await expect(failed).rejects.toThrow('the work after the insert failed');
      await expect(plants.page('alice', 10)).resolves.toEqual([]);
    });
  });

  describe('page', () => {
    it("reads up to `count` of the owner's plants in id order, none of another owner's", async () => {
      await seed('alice', [5n, 1n, 3n, 2n, 4n]);
      await seed('bob', [0n, 6n]);
      await expect(plants.page('alice', 3)).resolves.toStrictEqual(
        [1n, 2n, 3n].map((id) => expectedPlant({ id, name: `Plant ${id}` })),
      );
    });

    it('starts after the cursor, exactly, even next to the largest id', async () => {
      await seed('alice', [1n, MAX_INT64 - 1n, MAX_INT64]);
      await expect(plants.page('alice', 10, 1n)).resolves.toStrictEqual([
        expectedPlant({ id: MAX_INT64 - 1n, name: `Plant ${MAX_INT64 - 1n}` }),
        expectedPlant({ id: MAX_INT64, name: `Plant ${MAX_INT64}` }),
      ]);
      await expect(plants.page('alice', 10, MAX_INT64 - 1n)).resolves.toStrictEqual([
        expectedPlant({ id: MAX_INT64, name: `Plant ${MAX_INT64}` }),
      ]);
      await expect(plants.page('alice', 10, MAX_INT64)).resolves.toEqual([]);
    });

    it('reads nothing for an owner without plants', async () => {
      await expect(plants.page('nobody', 10)).resolves.toEqual([]);
    });
  });

  describe('delete', () => {
    it("deletes the owner's plant and says so; a missing one, or another owner's, is not found", async () => {
      await seed('alice', [1n, 2n]);
      await seed('bob', [3n]);
      await expect(plants.delete('alice', 1n)).resolves.toBe(true);
      await expect(plants.delete('alice', 1n)).resolves.toBe(false);
      await expect(plants.delete('alice', 3n)).resolves.toBe(false);
      await expect(plants.page('alice', 10)).resolves.toStrictEqual([expectedPlant({ id: 2n, name: 'Plant 2' })]);
      await expect(plants.page('bob', 10)).resolves.toStrictEqual([expectedPlant({ id: 3n, name: 'Plant 3' })]);
    });

    it('deletes only while a condition holds, in the same statement', async () => {
      await seed('alice', [1n]);
      await expect(plants.delete('alice', 1n, holds(false))).resolves.toBe(false);
      await expect(plants.delete('alice', 1n, holds(true))).resolves.toBe(true);
      await expect(plants.page('alice', 10)).resolves.toEqual([]);
    });
  });
});
