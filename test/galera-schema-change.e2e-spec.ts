import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DataSource, Logger, MigrationInterface, QueryRunner } from 'typeorm';
import { loadConfig } from '../src/config/configuration';
import { MIGRATIONS, POST_DEPLOYMENT_MIGRATIONS, buildDataSourceOptions } from '../src/database/data-source';
import { prepareGaleraSessions } from '../src/database/galera';
import { PT_ONLINE_SCHEMA_CHANGE } from '../src/database/galera-schema-change';
import { runPendingMigrations } from '../src/database/migrations-runner';
import { changeLargeTable } from '../src/database/migrations/online-ddl';
import {
  GaleraCluster,
  describeGalera,
  longestGapMs,
  report,
  startGaleraCluster,
  startInstance,
  startWriteLoad,
  testPortBase,
  WriteLoad,
} from './utils/galera';
import { mysqlConnection } from './utils/databases';
import { TestApp } from './utils/test-app';

const DB = 'plantstore_galera_schema';
/**
 * Plants in the table changed: TEST_GALERA_SCHEMA_ROWS, two million by default. The write gap must
 * stay under a second at any size, where a replicated DROP TABLE of the old table grew with it; at
 * two million, the run takes about a minute longer than at one.
 */
const ROWS = Number(process.env.TEST_GALERA_SCHEMA_ROWS ?? 2_000_000);
// The seeding and the copy take over a minute per million rows on a loaded 2-core machine.
jest.setTimeout(Math.max(300_000, ROWS * 0.3));
/** The longest a client may go without a successful create while the migrations run. */
const MAX_WRITE_GAP_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The longest time between two successful creates of `load` that overlaps `from`-`to`: when it began and ended. */
function longestGapWindow(load: WriteLoad, from: number, to: number): { from: number; to: number } {
  const done = load.answers
    .filter((answer) => answer.op === 'create' && answer.status === 200)
    .map((answer) => answer.at + answer.ms)
    .sort((a, b) => a - b);
  let gap = { from, to: from };
  for (let i = 1; i < done.length; i++) {
    if (done[i] >= from && done[i - 1] <= to && done[i] - done[i - 1] > gap.to - gap.from)
      gap = { from: done[i - 1], to: done[i] };
  }
  return gap;
}

/** How long flow control has paused the node's replication since it started. */
async function flowControlPausedMs(cluster: GaleraCluster, node: number): Promise<number> {
  const [row] = await cluster.onNode<{ Value: string }[]>(
    node,
    "SHOW GLOBAL STATUS LIKE 'wsrep_flow_control_paused_ns'",
  );
  return Math.round(Number(row.Value) / 1e6);
}

/** When each migration of the test ran, to say which one a gap fell in. */
const ran: { name: string; from: number; to: number }[] = [];
const timed = async (name: string, work: () => Promise<void>) => {
  const from = Date.now();
  await work();
  ran.push({ name, from, to: Date.now() });
};

/** An expand step as a release would ship one: an index on a table of millions of rows. */
class PlantsByName1799000000000 implements MigrationInterface {
  name = 'PlantsByName1799000000000';
  async up(queryRunner: QueryRunner): Promise<void> {
    await timed('add index', () => changeLargeTable(queryRunner, 'plants', 'ADD INDEX IDX_plants_name (owner, name)'));
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await changeLargeTable(queryRunner, 'plants', 'DROP INDEX IDX_plants_name');
  }
}

/** A contract step: the column a previous release wrote, dropped. */
class PlantsNoteDropped1799000000001 implements MigrationInterface {
  name = 'PlantsNoteDropped1799000000001';
  async up(queryRunner: QueryRunner): Promise<void> {
    await timed('drop column', () => changeLargeTable(queryRunner, 'plants', 'DROP COLUMN note'));
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await changeLargeTable(queryRunner, 'plants', 'ADD COLUMN note varchar(64) NULL AFTER name');
  }
}

/**
 * Schema changes of a large table on a Galera cluster while the service writes through HAProxy
 * (docs/scaling.md, "Schema changes"): Galera applies a schema change on every node at once and
 * holds all other writes until it ends, so the migration runner makes a large table's change
 * without such a pause. The test's migrations run through the runner as a release's would.
 */
describeGalera('Schema changes of a large table on a Galera cluster, under load', () => {
  let cluster: GaleraCluster;
  let app: TestApp; // through HAProxy
  let onNode2: TestApp; // attached to node 2, as connections left on a backup after a failover are
  let token: string;

  beforeAll(async () => {
    cluster = await startGaleraCluster(testPortBase(3));
    await cluster.createDatabase(DB);
    app = await startInstance(cluster.haproxyUrl(DB));
    onNode2 = await startInstance(cluster.nodeUrl(2, DB));
    token = await app.token({ subject: 'schema-change' });
    // The column a previous release wrote (in the middle of the row, as columns of earlier releases are).
    await cluster.onNode(1, `ALTER TABLE \`${DB}\`.plants ADD COLUMN note varchar(64) NULL AFTER name`);
    // What a run killed after the tool's swap leaves: the table's old copy, here on node 2 alone
    // (as when the run stopped while dropping it node by node). The runner drops it first.
    const node2 = await mysqlConnection(cluster.nodeUrl(2, DB));
    try {
      await node2.query('SET SESSION wsrep_on = OFF');
      await node2.query('CREATE TABLE _plants_old LIKE plants');
    } finally {
      node2.destroy();
    }
    // Through one node, in statements of 200,000 rows: a write set of a million rows would be slow to certify.
    for (let from = 1; from <= ROWS; from += 200_000) {
      await cluster.onNode(
        1,
        `INSERT INTO \`${DB}\`.plants (owner, id, name, note, tag) ` +
          "SELECT CONCAT('seeded-', seq DIV 1000), seq, CONCAT('Seeded ', seq), 'written by the previous release', " +
          `IF(seq % 3 = 0, 'green', NULL) FROM \`${DB}\`.seq_${from}_to_${Math.min(from + 199_999, ROWS)}`,
      );
    }
  });
  afterAll(async () => {
    await app?.close().catch(() => undefined);
    await onNode2?.close().catch(() => undefined);
    await cluster?.stop();
  });

  it('adds an index and drops a column of a table of millions of rows with no write gap of a second, no failed request, and one schema on every node', async () => {
    const [{ n }] = await cluster.onNode<{ n: string }[]>(
      2,
      `SET STATEMENT wsrep_sync_wait = 1 FOR SELECT COUNT(*) AS n FROM \`${DB}\`.plants`,
    );
    expect(Number(n)).toBeGreaterThanOrEqual(ROWS);

    const migrationLog: string[] = [];
    const logged: { at: number; message: string }[] = [];
    const warnings: string[] = [];
    const logger: Logger = {
      logQuery: () => undefined,
      logQueryError: () => undefined,
      logQuerySlow: () => undefined,
      logSchemaBuild: (message) => void logged.push({ at: Date.now(), message }),
      logMigration: (message) => {
        migrationLog.push(message);
        logged.push({ at: Date.now(), message });
      },
      log: (level, message) => void (level === 'warn' && warnings.push(String(message))),
    };
    const dataSource = await new DataSource({
      ...buildDataSourceOptions(loadConfig({ DATABASE_URL: cluster.haproxyUrl(DB) }).database),
      migrations: [
        ...MIGRATIONS,
        ...POST_DEPLOYMENT_MIGRATIONS,
        PlantsByName1799000000000,
        PlantsNoteDropped1799000000001,
      ],
      logger,
    }).initialize();

    // Creates one after another, each listed right after it is acknowledged, through HAProxy, and
    // fewer through node 2 at the same time: the writes of another node meet the copy's locks, as
    // while some of the service's connections are still on a backup after a failover.
    const load = startWriteLoad({ writer: app, reader: app, token, firstId: 10_000_000 });
    const elsewhere = startWriteLoad({ writer: onNode2, reader: onNode2, token, firstId: 20_000_000, writers: 4 });
    const loads = [load, elsewhere];
    try {
      await sleep(2000);
      // What else can stop the writes, for the report: the cluster's flow control (a node that
      // falls behind pauses every other), and this process's own event loop, which runs both
      // instances and their clients (a machine short of CPU stalls them all at once).
      const flowControl = () => Promise.all([1, 2, 3].map((node) => flowControlPausedMs(cluster, node)));
      const pausedBefore = await flowControl();
      const loop = monitorEventLoopDelay({ resolution: 20 });
      loop.enable();
      const startedAt = Date.now();
      try {
        await prepareGaleraSessions(dataSource);
        await runPendingMigrations(dataSource, 'post-deployment');
      } finally {
        await dataSource.destroy();
      }
      loop.disable();
      const pausedAfter = await flowControl();
      process.stdout.write(
        `while migrating: flow control paused node 1, 2, 3 for ${pausedAfter.map((ms, i) => ms - pausedBefore[i]).join(', ')} ms; ` +
          `this process's event loop was late by up to ${Math.round(loop.max / 1e6)} ms\n`,
      );
      await sleep(2000);
      await Promise.all(loads.map((each) => each.stop()));

      report('schema changes through HAProxy', load, startedAt);
      report('schema changes through node 2', elsewhere, startedAt);
      const gaps = ran.map(
        ({ name, from, to }) =>
          `${name} ${to - from} ms (longest write gap ${longestGapMs(load, from, to)} ms through HAProxy, ` +
          `${longestGapMs(elsewhere, from, to)} ms through node 2)`,
      );
      process.stdout.write(`schema changes on ${ROWS} rows: ${gaps.join(', ')}\n`);
      // The tool's last step and what follows it: the swap, and the old table's drop.
      const swapped = logged.find(({ message }) => message.includes('Swapping tables'))?.at;
      if (swapped) {
        process.stdout.write(
          `from the swap to the index's end: ${ran[0].to - swapped} ms, longest write gap ` +
            `${longestGapMs(load, swapped, ran[0].to)} ms through HAProxy, ${longestGapMs(elsewhere, swapped, ran[0].to)} ms through node 2\n`,
        );
      }
      // Where the longest gaps fell among the migrations' steps, to say which statement held the writes.
      const gap = (each: WriteLoad) => longestGapWindow(each, ran[0].from, ran[ran.length - 1].to);
      process.stdout.write(
        `longest gaps: ${gap(load).to - gap(load).from} ms from +${gap(load).from - startedAt} ms through HAProxy, ` +
          `${gap(elsewhere).to - gap(elsewhere).from} ms from +${gap(elsewhere).from - startedAt} ms through node 2; ` +
          `the migration log:\n${logged.map(({ at, message }) => `  +${at - startedAt} ms ${message}`).join('\n')}\n`,
      );
    } finally {
      await Promise.all(loads.map((each) => each.stop()));
    }

    for (const each of loads) {
      expect(each.failures()).toEqual([]);
      expect(each.staleReads).toEqual([]);
    }
    expect(ran.map(({ name }) => name)).toEqual(['add index', 'drop column']);
    // Writes went on while the index was built (seconds), never pausing for a second.
    const [index] = ran;
    const during = load.answers.filter((x) => x.op === 'create' && x.at > index.from && x.at + x.ms < index.to);
    expect(during.length).toBeGreaterThan(100);
    for (const each of loads) {
      expect(longestGapMs(each, ran[0].from, ran[ran.length - 1].to)).toBeLessThan(MAX_WRITE_GAP_MS);
    }
    // The index was built by copying the table in chunks; the column went with the table's definition alone.
    expect(migrationLog).toContainEqual(expect.stringMatching(`^${PT_ONLINE_SCHEMA_CHANGE}: Successfully altered`));
    expect(migrationLog.filter((line) => line.includes('Altering new table')).length).toBe(1);
    // The leftover copy went before the tool ran, and the tool's old table after it, each node
    // dropping its own with the cluster's writes going on.
    expect(
      migrationLog.filter((line) => /^Dropped _plants_old on node\d alone/.test(line)).map((line) => line.slice(0, 32)),
    ).toEqual([
      'Dropped _plants_old on node2 alo',
      'Dropped _plants_old on node2 alo',
      'Dropped _plants_old on node3 alo',
      'Dropped _plants_old on node1 alo',
    ]);
    expect(warnings).toEqual([]);

    // The same schema on every node, with the index and without the column, and nothing of the tool left.
    const schemas = await Promise.all(
      [1, 2, 3].map(async (node) => {
        const tables = await cluster.onNode<{ name: string }[]>(
          node,
          'SET STATEMENT wsrep_sync_wait = 1 FOR SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY name',
          [DB],
        );
        const definitions = [];
        for (const { name } of tables) {
          const [row] = await cluster.onNode<Record<string, string>[]>(node, `SHOW CREATE TABLE \`${DB}\`.\`${name}\``);
          definitions.push(row['Create Table'].replace(/ AUTO_INCREMENT=\d+/, ''));
        }
        const triggers = await cluster.onNode<unknown[]>(
          node,
          'SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?',
          [DB],
        );
        return { definitions, triggers };
      }),
    );
    expect(schemas[1]).toEqual(schemas[0]);
    expect(schemas[2]).toEqual(schemas[0]);
    expect(schemas[0].triggers).toEqual([]);
    const plants = schemas[0].definitions.find((definition) => definition.startsWith('CREATE TABLE `plants`'));
    expect(plants).toMatch(/KEY `IDX_plants_name` \(`owner`,`name`\)/);
    expect(plants).not.toMatch(/`note`/);
    expect(schemas[0].definitions.some((definition) => /`_plants_(old|new)`/.test(definition))).toBe(false);

    // Every acknowledged create is in the table the change left, on every node.
    for (const node of [1, 2, 3]) {
      const rows = await cluster.onNode<{ id: string }[]>(
        node,
        `SET STATEMENT wsrep_sync_wait = 1 FOR SELECT id FROM \`${DB}\`.plants WHERE owner = 'schema-change'`,
      );
      const present = new Set(rows.map((row) => Number(row.id)));
      for (const each of loads) expect(each.acknowledged.filter((id) => !present.has(id))).toEqual([]);
    }
  });
});
