import type { Connection } from 'mysql2/promise';
import { QueryRunner } from 'typeorm';
import { ConnectNode, NodeAddress, clusterNodeAddresses, dropLeftoverOldCopies, dropOldCopy } from './galera-old-copy';

const ADDRESSES = '10.0.0.1:3306,10.0.0.2:3306,10.0.0.3:3306';

/** The migrations' connection, on node1 through the load balancer; what it ran is kept. */
function migrationConnection({
  addresses = ADDRESSES,
  size = 3,
  tables = ['plants'],
}: { addresses?: string; size?: number; tables?: string[] } = {}) {
  const ran: string[] = [];
  const logged: string[] = [];
  const warned: string[] = [];
  const query = jest.fn(async (sql: string, values: string[] = []) => {
    ran.push(sql);
    if (sql.startsWith('SHOW GLOBAL STATUS')) {
      return [
        { Variable_name: 'wsrep_cluster_size', Value: String(size) },
        { Variable_name: 'wsrep_incoming_addresses', Value: addresses },
      ];
    }
    if (sql.startsWith('SELECT @@wsrep_node_name')) return [{ name: 'node1' }];
    if (sql.startsWith('SELECT COUNT(*)')) return [{ n: tables.includes(values[0]) ? 1 : 0 }];
    if (sql.includes('information_schema.TABLES')) return tables.map((name) => ({ name }));
    return [];
  });
  const queryRunner = {
    query,
    connection: {
      options: { type: 'mariadb', url: 'mariadb://migrator:s3cr%40t@proxy:3306/plantstore', connectTimeout: 2000 },
      logger: {
        logMigration: (message: string) => logged.push(message),
        log: (level: string, message: string) => (level === 'warn' ? warned : logged).push(message),
      },
    },
  } as unknown as QueryRunner;
  return { queryRunner, ran, logged, warned };
}

/**
 * Nodes reached directly, by address: each with its name, whether it holds the old copy, and how
 * it answers the session's switch to no replication; every statement each ran, in order, is kept.
 */
function nodes(spec: Record<string, { name: string; holds: boolean; refuses?: string; unreachable?: boolean }>) {
  const ran: string[] = [];
  const logins: unknown[] = [];
  const droppedOn: Record<string, Set<string>> = {};
  const connect: ConnectNode = async (address: NodeAddress, login) => {
    logins.push(login);
    const node = spec[`${address.host}:${address.port}`];
    const dropped = (droppedOn[node.name] ??= new Set());
    if (node.unreachable) throw Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' });
    const query = jest.fn(async (sql: string, values: string[] = []) => {
      ran.push(`${node.name}: ${sql}`);
      if (sql.startsWith('SET SESSION wsrep_on') && node.refuses) {
        throw Object.assign(new Error('Access denied'), { code: node.refuses });
      }
      if (sql.startsWith('SELECT @@wsrep_node_name')) return [[{ '@@wsrep_node_name': node.name }]];
      if (sql.startsWith('SELECT COUNT(*)')) return [[{ n: node.holds && !dropped.has(values[0]) ? 1 : 0 }]];
      if (sql.startsWith('DROP TABLE')) dropped.add(/`(.+)`/.exec(sql)![1]);
      return [[]];
    });
    return { query, destroy: jest.fn(() => ran.push(`${node.name}: closed`)) } as unknown as Connection;
  };
  return { connect, ran, logins };
}

const everyNode = (holds: boolean) => ({
  '10.0.0.1:3306': { name: 'node1', holds },
  '10.0.0.2:3306': { name: 'node2', holds },
  '10.0.0.3:3306': { name: 'node3', holds },
});

describe(clusterNodeAddresses.name, () => {
  it('reads every node of the cluster from wsrep_incoming_addresses', async () => {
    const { queryRunner } = migrationConnection({ addresses: '10.0.0.1:3306,[fd00::2]:3307', size: 2 });
    await expect(clusterNodeAddresses(queryRunner)).resolves.toEqual([
      { host: '10.0.0.1', port: 3306 },
      { host: 'fd00::2', port: 3307 },
    ]);
  });

  it('says why when a node does not report its address, or the list misses a node', async () => {
    await expect(clusterNodeAddresses(migrationConnection({ addresses: 'AUTO,AUTO,AUTO' }).queryRunner)).resolves.toBe(
      'the cluster names the client address of 0 of its 3 nodes (wsrep_incoming_addresses: AUTO,AUTO,AUTO; ' +
        "set each node's wsrep_node_incoming_address)",
    );
    await expect(
      clusterNodeAddresses(migrationConnection({ addresses: '10.0.0.1:3306,AUTO' }).queryRunner),
    ).resolves.toMatch(/^the cluster names the client address of 1 of its 3 nodes/);
  });
});

describe(dropOldCopy.name, () => {
  it('drops the old copy on each node alone, with replication off for that session, the others by name and the node the migrations use last', async () => {
    // The cluster reports its addresses in no fixed order.
    const { queryRunner, ran, logged, warned } = migrationConnection({
      addresses: '10.0.0.3:3306,10.0.0.1:3306,10.0.0.2:3306',
    });
    const cluster = nodes(everyNode(true));
    await dropOldCopy(queryRunner, 'plants', cluster.connect);

    // The migrations' login, password decoded, on each node's own address.
    expect(cluster.logins).toEqual(
      Array(3).fill({ user: 'migrator', password: 's3cr@t', database: 'plantstore', connectTimeout: 2000 }),
    );
    const drops = cluster.ran.filter((line) => line.includes('DROP TABLE'));
    expect(drops).toEqual([
      'node2: DROP TABLE IF EXISTS `_plants_old`',
      'node3: DROP TABLE IF EXISTS `_plants_old`',
      'node1: DROP TABLE IF EXISTS `_plants_old`',
    ]);
    for (const name of ['node1', 'node2', 'node3']) {
      const own = cluster.ran.filter((line) => line.startsWith(`${name}:`));
      expect(own[0]).toBe(`${name}: SET SESSION wsrep_on = OFF, sql_log_bin = 0`);
      expect(own[own.length - 1]).toBe(`${name}: closed`);
    }
    // Then one replicated drop, which finds nothing left where every node was reached, and
    // replays on a node that was down when it rejoins.
    expect(ran.filter((sql) => sql.startsWith('DROP'))).toEqual(['DROP TABLE IF EXISTS `_plants_old`']);
    expect(ran.indexOf('DROP TABLE IF EXISTS `_plants_old`')).toBe(ran.length - 1);
    expect(logged).toEqual([
      expect.stringMatching(/^Dropped _plants_old on node2 alone in \d+ ms$/),
      expect.stringMatching(/^Dropped _plants_old on node3 alone in \d+ ms$/),
      expect.stringMatching(/^Dropped _plants_old on node1 alone in \d+ ms$/),
    ]);
    expect(warned).toEqual([]);
  });

  it('finishes what a run that stopped halfway left: the copy on the one node that still has it', async () => {
    const { queryRunner, ran } = migrationConnection();
    const cluster = nodes({ ...everyNode(false), '10.0.0.3:3306': { name: 'node3', holds: true } });
    await dropOldCopy(queryRunner, 'plants', cluster.connect);
    expect(cluster.ran.filter((line) => line.includes('DROP TABLE'))).toEqual([
      'node3: DROP TABLE IF EXISTS `_plants_old`',
    ]);
    expect(ran.filter((sql) => sql.startsWith('DROP'))).toEqual(['DROP TABLE IF EXISTS `_plants_old`']);
  });

  it('changes nothing, and pauses nothing, where no node has one', async () => {
    const { queryRunner, ran } = migrationConnection();
    const cluster = nodes(everyNode(false));
    await dropOldCopy(queryRunner, 'plants', cluster.connect);
    expect(cluster.ran.filter((line) => line.includes('DROP'))).toEqual([]);
    expect(ran.filter((sql) => sql.startsWith('DROP'))).toEqual([]);
  });

  it('leaves a node it cannot drop on alone to the replicated drop, and says why', async () => {
    const { queryRunner, ran, warned } = migrationConnection();
    const cluster = nodes({
      '10.0.0.1:3306': { name: 'node1', holds: true, refuses: 'ER_SPECIFIC_ACCESS_DENIED_ERROR' },
      '10.0.0.2:3306': { name: 'node2', holds: true },
      '10.0.0.3:3306': { name: 'node3', holds: true, unreachable: true },
    });
    await dropOldCopy(queryRunner, 'plants', cluster.connect);
    expect(cluster.ran.filter((line) => line.includes('DROP'))).toEqual(['node2: DROP TABLE IF EXISTS `_plants_old`']);
    expect(ran.filter((sql) => sql.startsWith('DROP'))).toEqual(['DROP TABLE IF EXISTS `_plants_old`']);
    expect(warned).toEqual([
      expect.stringMatching(
        /^Dropped _plants_old by a replicated DROP TABLE \(\d+ ms, the cluster's writes held meanwhile where a node still had it\), since not every node could drop it alone: 10\.0\.0\.1:3306: ER_SPECIFIC_ACCESS_DENIED_ERROR; 10\.0\.0\.3:3306: ETIMEDOUT$/,
      ),
    ]);
    expect(cluster.ran).toContain('node1: closed');
  });

  it('drops it by one replicated DROP TABLE where the nodes do not report their addresses', async () => {
    const { queryRunner, ran, warned } = migrationConnection({
      addresses: 'AUTO,AUTO,AUTO',
      tables: ['plants', '_plants_old'],
    });
    const cluster = nodes(everyNode(true));
    await dropOldCopy(queryRunner, 'plants', cluster.connect);
    expect(cluster.logins).toEqual([]);
    expect(ran.filter((sql) => sql.startsWith('DROP'))).toEqual(['DROP TABLE IF EXISTS `_plants_old`']);
    expect(warned).toEqual([expect.stringContaining('the cluster names the client address of 0 of its 3 nodes')]);
  });

  it('says nothing where no copy was known to be left, though it drops one a node it cannot see may hold', async () => {
    const { queryRunner, ran, warned } = migrationConnection({ addresses: 'AUTO,AUTO,AUTO' });
    await dropOldCopy(queryRunner, 'plants', nodes(everyNode(false)).connect);
    expect(ran.filter((sql) => sql.startsWith('DROP'))).toEqual(['DROP TABLE IF EXISTS `_plants_old`']);
    expect(warned).toEqual([]);
  });
});

describe(dropLeftoverOldCopies.name, () => {
  it('drops the old copy of each table that has one, and no other table', async () => {
    const { queryRunner } = migrationConnection({
      tables: ['plants', '_plants_old', 'webhook_deliveries', '_webhook_deliveries_old', '_gone_old', '_plants_new'],
    });
    const cluster = nodes(everyNode(true));
    await dropLeftoverOldCopies(queryRunner, cluster.connect);
    expect(cluster.ran.filter((line) => line.startsWith('node1: DROP'))).toEqual([
      'node1: DROP TABLE IF EXISTS `_plants_old`',
      'node1: DROP TABLE IF EXISTS `_webhook_deliveries_old`',
    ]);
  });
});
