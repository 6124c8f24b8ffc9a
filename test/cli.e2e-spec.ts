import { CliIo, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, runCli } from '../src/cli';
import { POST_DEPLOYMENT_MIGRATIONS } from '../src/database/data-source';
import { expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { undoMigrations } from './utils/migrations';
import { cliContext } from './utils/service-process';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';

/** The admin CLI against the same database as a running service. */
describe.each(testDatabases())('plantstore CLI on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(database);
  });
  afterAll(() => t.close());
  beforeEach(() => t.reset());

  async function cli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (l) => out.push(...l.split('\n')), err: (l) => err.push(...l.split('\n')) };
    const code = await runCli(argv, io, cliContext(t.db.env));
    return { code, out, err };
  }

  it('creates a token that the API accepts, printed alone on the last line', async () => {
    const created = await cli('token', 'create', '--user', 'dana', '--name', 'laptop');
    expect(created.code).toBe(EXIT_OK);
    const secret = created.out[created.out.length - 1];
    expect(secret).toMatch(/^pst_[A-Za-z0-9_-]{43}$/);

    const res = await t
      .http()
      .post('/plants')
      .set(bearer(secret))
      .set('Content-Type', 'application/json')
      .send('{"id":1,"name":"Basil"}');
    expect(res.status).toBe(200);
    expect((await t.http().get('/plants').set(bearer(secret))).body).toEqual([expectedPlant({ id: 1, name: 'Basil' })]);
  });

  it('honours --scope and --expires-in', async () => {
    const created = await cli('token', 'create', '--user', 'erin', '--scope', 'plants:read', '--expires-in', '2h');
    const secret = created.out[created.out.length - 1];
    expect(created.out[0]).toMatch(/scopes: plants:read; expires \d{4}-/);
    expect((await t.http().get('/plants').set(bearer(secret))).status).toBe(200);
    expectErrorBody(await t.http().delete('/plants/1').set(bearer(secret)), 403);
  });

  it('lists tokens without their secrets', async () => {
    const a = await cli('token', 'create', '--user', 'frank');
    await cli('token', 'create', '--user', 'gina');
    const secret = a.out[a.out.length - 1];

    const all = await cli('token', 'list');
    expect(all.code).toBe(EXIT_OK);
    expect(all.out[0]).toMatch(/^ID\s+USER\s+NAME\s+SCOPES/);
    expect(all.out).toHaveLength(3);
    expect(all.out.join('\n')).not.toContain(secret);
    expect(all.out.join('\n')).not.toContain(secret.slice(4, 20));

    const one = await cli('token', 'list', '--user', 'gina');
    expect(one.out).toHaveLength(2);
    expect(one.out[1]).toContain('gina');
  });

  it('revokes by id or by the token itself; the API refuses it at once', async () => {
    const first = await cli('token', 'create', '--user', 'hank');
    const second = await cli('token', 'create', '--user', 'hank');
    const firstSecret = first.out[first.out.length - 1];
    const secondSecret = second.out[second.out.length - 1];
    const secondId = /Created token (\S+) /.exec(second.out[0])![1];

    expect((await cli('token', 'revoke', firstSecret)).code).toBe(EXIT_OK);
    expect((await cli('token', 'revoke', secondId)).out).toEqual([`Revoked token ${secondId}.`]);
    expect((await cli('token', 'revoke', secondId)).out).toEqual([`Token ${secondId} was already revoked.`]);

    for (const secret of [firstSecret, secondSecret]) {
      const res = await t.http().get('/plants').set(bearer(secret));
      expectErrorBody(res, 401);
    }
    expect((await cli('token', 'list', '--user', 'hank')).out.slice(1).every((l) => l.endsWith('revoked'))).toBe(true);
  });

  it('exits 1 when revoking a token that does not exist', async () => {
    const res = await cli('token', 'revoke', '00000000-0000-0000-0000-000000000000');
    expect(res.code).toBe(EXIT_FAILURE);
    expect(res.err).toEqual(['No token matches that token or id.']);
  });

  it('exits 2 with a readable message for a bad user id', async () => {
    const res = await cli('token', 'create', '--user', 'has space');
    expect(res.code).toBe(EXIT_USAGE);
    expect(res.err[0]).toMatch(/^A user id is 1 to 128 characters/);
    expect((await cli('token', 'list')).out).toEqual(['No tokens.']);
  });

  it('runs the post-deployment migrations when told, which start-up left pending', async () => {
    const postDeployment = POST_DEPLOYMENT_MIGRATIONS.map((migration) => migration.name);
    const applied = async () =>
      ((await t.dataSource.query('SELECT name FROM migrations ORDER BY timestamp')) as { name: string }[]).map(
        (row) => row.name,
      );
    const before = await applied();
    await undoMigrations(t.dataSource, postDeployment);
    const left = await applied();
    // Those applied after them went too; the command applies them all again, in timestamp order.
    const undone = before.filter((name) => !left.includes(name));
    const undoneRegular = undone.filter((name) => !postDeployment.includes(name));
    // What a start of the service leaves: on SQLite nothing, since no other release can serve beside it.
    const started = await cli('migrate');
    expect(started.code).toBe(EXIT_OK);
    expect(started.out).toEqual(
      database === 'sqlite'
        ? [...undone.map((name) => `applied ${name}`), 'The schema is up to date.']
        : [
            // Regular migrations applied after the post-deployment ones went with them, and came back.
            ...(undoneRegular.length > 0
              ? undoneRegular.map((name) => `applied ${name}`)
              : ['No migration was pending.']),
            'Post-deployment migrations pending (run migrate --post-deployment once every instance runs this release): ' +
              postDeployment.join(', '),
          ],
    );
    if (database === 'mysql') {
      const contracted = await cli('migrate', '--post-deployment');
      expect(contracted.code).toBe(EXIT_OK);
      expect(contracted.out).toEqual([...postDeployment.map((name) => `applied ${name}`), 'The schema is up to date.']);
    }
    await expect(t.dataSource.showMigrations()).resolves.toBe(false);
  });
});
