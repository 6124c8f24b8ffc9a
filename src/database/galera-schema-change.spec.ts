import { EventEmitter } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { QueryRunner } from 'typeorm';
import { spawn } from 'node:child_process';
import { dropOldCopy } from './galera-old-copy';
import {
  PT_ONLINE_SCHEMA_CHANGE,
  SCHEMA_CHANGE_PROGRESS_SECONDS,
  galeraLargeTableChange,
  onlineSchemaChangeArguments,
} from './galera-schema-change';

jest.mock('node:child_process', () => ({ spawn: jest.fn() }));
const spawned = spawn as unknown as jest.Mock;
// What it does node by node is galera-old-copy.spec.ts's; here, when it is asked to.
jest.mock('./galera-old-copy', () => ({ dropOldCopy: jest.fn(async () => undefined) }));
const droppedOldCopy = dropOldCopy as unknown as jest.Mock;

/** A child process that writes `lines` and exits with `code`; what it was started with is kept. */
function fakeTool(code: number, lines: string[]) {
  const seen: { args: string[]; defaults?: { text: string; mode: number } } = { args: [] };
  spawned.mockImplementation((_command: string, args: string[]) => {
    seen.args = args;
    const file = args.find((arg) => arg.includes(',F='))?.split(',F=')[1];
    if (file) seen.defaults = { text: readFileSync(file, 'utf8'), mode: statSync(file).mode & 0o777 };
    const child = Object.assign(new EventEmitter(), { stdout: new PassThrough(), stderr: new PassThrough() });
    setImmediate(() => {
      for (const line of lines) child.stdout.write(`${line}\n`);
      child.stdout.end();
      child.stderr.end();
      setImmediate(() => child.emit('close', code));
    });
    return child;
  });
  return seen;
}

function fakeQueryRunner(instant: 'done' | 'refused', url = 'mysql://migrator:s3cr%40t@db.internal:3307/plantstore') {
  const logged: string[] = [];
  const query = jest.fn(async (sql: string) => {
    if (sql.includes('ALGORITHM=INSTANT') && instant === 'refused') {
      throw Object.assign(new Error('ALGORITHM=INSTANT is not supported'), {
        driverError: { code: 'ER_ALTER_OPERATION_NOT_SUPPORTED_REASON' },
      });
    }
    if (sql.startsWith('SHOW VARIABLES')) return [{ Variable_name: 'tx_isolation', Value: 'REPEATABLE-READ' }];
    return [];
  });
  const queryRunner = {
    query,
    connection: { options: { type: 'mysql', url }, logger: { logMigration: (m: string) => logged.push(m) } },
  } as unknown as QueryRunner;
  return { queryRunner, query, logged };
}

describe('onlineSchemaChangeArguments', () => {
  it('names the server, database and table, runs the change for real, and puts the password in the option file only', () => {
    const args = onlineSchemaChangeArguments(
      { host: 'db', port: 3307, user: 'migrator', database: 'plantstore' },
      'plants',
      'ADD INDEX i (name)',
      'tx_isolation',
      '/tmp/x/client.cnf',
    );
    expect(args.slice(0, 3)).toEqual([
      '--alter',
      'ADD INDEX i (name)',
      'h=db,P=3307,u=migrator,D=plantstore,t=plants,F=/tmp/x/client.cnf',
    ]);
    expect(args).toContain('--execute');
    expect(args).toContain('--no-version-check');
    expect(args).toContain("--set-vars=lock_wait_timeout=2,tx_isolation='READ-COMMITTED'");
    // The old table stays for dropOldCopy; the copy's progress is told as it goes.
    expect(args).toContain('--no-drop-old-table');
    expect(args).toContain(`--progress=time,${SCHEMA_CHANGE_PROGRESS_SECONDS}`);
    expect(
      onlineSchemaChangeArguments(
        { host: 'db', port: 3306, user: 'root', database: 'p' },
        't',
        'DROP INDEX i',
        'transaction_isolation',
      )[2],
    ).toBe('h=db,P=3306,u=root,D=p,t=t');
  });
});

describe('galeraLargeTableChange', () => {
  beforeEach(() => {
    spawned.mockReset();
    droppedOldCopy.mockClear();
  });

  it('makes a change the server can make in the definition alone with ALGORITHM=INSTANT, without the tool', async () => {
    const { queryRunner, query } = fakeQueryRunner('done');
    await galeraLargeTableChange(queryRunner, 'plants', 'DROP COLUMN note');
    expect(query).toHaveBeenCalledWith('ALTER TABLE plants DROP COLUMN note, ALGORITHM=INSTANT');
    expect(spawned).not.toHaveBeenCalled();
    expect(droppedOldCopy).not.toHaveBeenCalled();
  });

  it('drops the old copy node by node before the tool runs (one left by an earlier run) and once it has swapped the tables', async () => {
    const { queryRunner } = fakeQueryRunner('refused');
    fakeTool(0, ['Successfully altered `plantstore`.`plants`.']);
    const order: string[] = [];
    droppedOldCopy.mockImplementation(async (_runner: QueryRunner, table: string) => void order.push(`drop ${table}`));
    spawned.mockImplementationOnce((...args: unknown[]) => {
      order.push('tool');
      return (spawned.getMockImplementation() as (...a: unknown[]) => unknown)(...args);
    });
    await galeraLargeTableChange(queryRunner, 'plants', 'ADD INDEX i (owner, name)');
    expect(order).toEqual(['drop plants', 'tool', 'drop plants']);
    expect(droppedOldCopy.mock.calls.every(([runner]) => runner === queryRunner)).toBe(true);
  });

  it('leaves the old copy of a change the tool failed to make: the tool swapped nothing', async () => {
    const { queryRunner } = fakeQueryRunner('refused', 'mysql://root@127.0.0.1:3306/p');
    fakeTool(1, ['`p`.`plants` was not altered.']);
    await expect(galeraLargeTableChange(queryRunner, 'plants', 'ADD INDEX i (name)')).rejects.toThrow(/exit code 1/);
    expect(droppedOldCopy).toHaveBeenCalledTimes(1);
  });

  it('hands any other change to pt-online-schema-change, on the data source server, logging its output', async () => {
    const { queryRunner, logged } = fakeQueryRunner('refused');
    const seen = fakeTool(0, [
      'Copying `plantstore`.`plants`:  45% 00:11 remain',
      'Successfully altered `plantstore`.`plants`.',
    ]);
    await galeraLargeTableChange(queryRunner, 'plants', 'ADD INDEX i (owner, name)');
    expect(spawned).toHaveBeenCalledWith(PT_ONLINE_SCHEMA_CHANGE, expect.any(Array), expect.anything());
    const file = seen.args[2].split(',F=')[1];
    expect(seen.args.slice(0, 3)).toEqual([
      '--alter',
      'ADD INDEX i (owner, name)',
      `h=db.internal,P=3307,u=migrator,D=plantstore,t=plants,F=${file}`,
    ]);
    // The isolation variable this server has (MariaDB before 11.1: tx_isolation).
    expect(seen.args).toContain("--set-vars=lock_wait_timeout=2,tx_isolation='READ-COMMITTED'");
    // Decoded as the connection decodes it, readable by this user alone, and gone afterwards.
    expect(seen.defaults).toEqual({ text: '[client]\npassword=s3cr@t\n', mode: 0o600 });
    expect(existsSync(file)).toBe(false);
    expect(logged).toEqual([
      `${PT_ONLINE_SCHEMA_CHANGE}: Copying \`plantstore\`.\`plants\`:  45% 00:11 remain`,
      `${PT_ONLINE_SCHEMA_CHANGE}: Successfully altered \`plantstore\`.\`plants\`.`,
    ]);
  });

  it('fails with what the tool said last when it fails', async () => {
    const { queryRunner } = fakeQueryRunner('refused', 'mysql://root@127.0.0.1:3306/p');
    fakeTool(1, ['Error copying rows: Deadlock found', '`p`.`plants` was not altered.']);
    await expect(galeraLargeTableChange(queryRunner, 'plants', 'ADD INDEX i (name)')).rejects.toThrow(
      `${PT_ONLINE_SCHEMA_CHANGE} could not change the table plants (exit code 1): Error copying rows: Deadlock found | \`p\`.\`plants\` was not altered.`,
    );
  });

  it('says what is missing when the tool is not installed', async () => {
    const { queryRunner } = fakeQueryRunner('refused', 'mysql://root@127.0.0.1:3306/p');
    spawned.mockImplementation(() => {
      const child = Object.assign(new EventEmitter(), { stdout: new PassThrough(), stderr: new PassThrough() });
      setImmediate(() => child.emit('error', Object.assign(new Error('spawn ENOENT'), { code: 'ENOENT' })));
      return child;
    });
    await expect(galeraLargeTableChange(queryRunner, 'plants', 'ADD INDEX i (name)')).rejects.toThrow(
      /needs pt-online-schema-change \(the percona-toolkit package\)/,
    );
  });

  it('passes on any other failure of the instant change', async () => {
    const { queryRunner, query } = fakeQueryRunner('done');
    query.mockRejectedValueOnce(Object.assign(new Error('Duplicate key name'), { code: 'ER_DUP_KEYNAME' }));
    await expect(galeraLargeTableChange(queryRunner, 'plants', 'ADD INDEX i (name)')).rejects.toThrow(
      'Duplicate key name',
    );
    expect(spawned).not.toHaveBeenCalled();
  });
});
