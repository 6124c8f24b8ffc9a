import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiToken } from './auth/api-token.entity';
import { SCOPE_NAMES } from './auth/scopes';
import { TokenInputError, TokensService } from './auth/tokens.service';
import { DataSource } from 'typeorm';
import { DATABASE_LOG_CONTEXT } from './database';
import {
  CliCommand,
  CliLogger,
  CliModule,
  EXIT_OK,
  EXIT_USAGE,
  USAGE,
  UsageError,
  execute,
  migrate,
  parseCommand,
  EXIT_FAILURE,
  parseExpiresIn,
  reseal,
  runCli,
  TokenCommand,
} from './cli';
import { ResealReport, SealedStore } from './secrets/sealed-store';
import { SecretsService } from './secrets/secrets.service';

// What the migrations did is the runner's (and test/cli.e2e-spec.ts's); here, what the command says of it.
jest.mock('./database/migrations-runner', () => ({
  migrationsApplied: jest.fn(),
  pendingMigrations: jest.fn(),
  runPendingMigrations: jest.fn(),
}));
const runner =
  jest.requireMock<Record<'migrationsApplied' | 'pendingMigrations' | 'runPendingMigrations', jest.Mock>>(
    './database/migrations-runner',
  );
const applied = runner.migrationsApplied;
const pending = runner.pendingMigrations;
const run = runner.runPendingMigrations;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const SECRET = `pst_${'A'.repeat(43)}`;

function usageError(action: () => unknown): UsageError {
  try {
    action();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('no UsageError was thrown');
}

function token(fields: Partial<ApiToken> = {}): ApiToken {
  return Object.assign(new ApiToken(), {
    id: '3f1c2a4e-0000-4000-8000-000000000001',
    tokenHash: 'f'.repeat(64),
    subject: 'alice',
    scopes: 'plants:read plants:write',
    name: null,
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    expiresAt: null,
    revokedAt: null,
    lastUsedAt: null,
    ...fields,
  });
}

function fakeIo(): { out: jest.Mock; err: jest.Mock; lines: () => string[] } {
  const out = jest.fn();
  return { out, err: jest.fn(), lines: () => out.mock.calls.map(([line]) => line as string) };
}

describe(parseCommand.name, () => {
  it.each([[[]], [['--help']], [['-h']], [['help']]])('reads %p as help', (argv) => {
    expect(parseCommand(argv)).toEqual({ kind: 'help' });
  });

  describe('token create', () => {
    it('needs only --user', () => {
      expect(parseCommand(['token', 'create', '--user', 'alice'])).toStrictEqual({
        kind: 'create',
        subject: 'alice',
        scopes: [],
        expiresInMs: undefined,
        name: undefined,
      });
    });

    it('reads every option, --scope repeated', () => {
      expect(
        parseCommand([
          'token',
          'create',
          '--user=bob',
          '--scope',
          'plants:read',
          '--scope',
          'plants:write',
          '--expires-in',
          '30d',
          '--name',
          'ci runner',
        ]),
      ).toStrictEqual({
        kind: 'create',
        subject: 'bob',
        scopes: ['plants:read', 'plants:write'],
        expiresInMs: 30 * DAY,
        name: 'ci runner',
      });
    });

    it('leaves the user id for the token service to check', () => {
      expect(parseCommand(['token', 'create', '--user', 'a b'])).toMatchObject({ subject: 'a b' });
    });

    it('needs --user', () => {
      expect(usageError(() => parseCommand(['token', 'create'])).message).toBe('token create needs --user <id>');
      expect(usageError(() => parseCommand(['token', 'create', '--scope', 'plants:read'])).message).toBe(
        'token create needs --user <id>',
      );
    });

    it('needs a value after --user', () => {
      expect(usageError(() => parseCommand(['token', 'create', '--user'])).message).toMatch(/--user/);
    });

    it('refuses an unknown scope and lists the known ones', () => {
      expect(
        usageError(() => parseCommand(['token', 'create', '--user', 'a', '--scope', 'plants:admin'])).message,
      ).toBe(`Unknown scope "plants:admin"; known scopes: ${SCOPE_NAMES.join(', ')}`);
    });

    it.each(['0d', '5w', '3651d', '1.5h', '-1d', 'd', '30', ''])('refuses --expires-in %p', (value) => {
      expect(
        usageError(() => parseCommand(['token', 'create', '--user', 'a', '--expires-in', value])).message,
      ).toContain('--expires-in');
    });

    it('refuses an extra positional argument', () => {
      expect(usageError(() => parseCommand(['token', 'create', '--user', 'a', 'extra'])).message).toBe(
        'Unexpected argument "extra"',
      );
    });

    it('refuses an unknown option', () => {
      expect(usageError(() => parseCommand(['token', 'create', '--user', 'a', '--admin'])).message).toMatch(/--admin/);
    });
  });

  describe('token list', () => {
    it('lists every user by default', () => {
      expect(parseCommand(['token', 'list'])).toStrictEqual({ kind: 'list', subject: undefined });
    });

    it('filters by --user', () => {
      expect(parseCommand(['token', 'list', '--user', 'alice'])).toStrictEqual({ kind: 'list', subject: 'alice' });
    });

    it('refuses an extra positional argument', () => {
      expect(usageError(() => parseCommand(['token', 'list', 'alice'])).message).toBe('Unexpected argument "alice"');
    });

    it('refuses options of create', () => {
      expect(() => parseCommand(['token', 'list', '--scope', 'plants:read'])).toThrow(UsageError);
    });
  });

  describe('token revoke', () => {
    it.each(['3f1c2a4e-0000-4000-8000-000000000001', SECRET])('takes one reference: %p', (reference) => {
      expect(parseCommand(['token', 'revoke', reference])).toStrictEqual({ kind: 'revoke', reference });
    });

    it.each([[['token', 'revoke']], [['token', 'revoke', 'a', 'b']]])('refuses %p', (argv) => {
      expect(usageError(() => parseCommand(argv)).message).toBe('token revoke takes exactly one token or token id');
    });

    it('refuses options', () => {
      expect(() => parseCommand(['token', 'revoke', '--user', 'a', 'id'])).toThrow(UsageError);
    });
  });

  describe('secrets reseal', () => {
    it('takes batches of 500 by default, or --batch-size', () => {
      expect(parseCommand(['secrets', 'reseal'])).toStrictEqual({ kind: 'reseal', batchSize: 500 });
      expect(parseCommand(['secrets', 'reseal', '--batch-size', '50'])).toStrictEqual({
        kind: 'reseal',
        batchSize: 50,
      });
      expect(parseCommand(['secrets', 'reseal', '--batch-size=10000'])).toMatchObject({ batchSize: 10_000 });
    });

    it.each(['0', '10001', '1.5', '-1', 'ten', '', '05'])('refuses --batch-size %p', (value) => {
      expect(usageError(() => parseCommand(['secrets', 'reseal', `--batch-size=${value}`])).message).toBe(
        `--batch-size takes a whole number from 1 to 10000; got "${value}"`,
      );
    });

    it('refuses another action, an argument or an unknown option', () => {
      expect(usageError(() => parseCommand(['secrets'])).message).toBe('secrets needs an action: reseal');
      expect(usageError(() => parseCommand(['secrets', 'show'])).message).toBe('Unknown action "secrets show"');
      expect(usageError(() => parseCommand(['secrets', 'reseal', 'now'])).message).toBe('Unexpected argument "now"');
      expect(() => parseCommand(['secrets', 'reseal', '--key', 'x'])).toThrow(UsageError);
    });
  });

  describe('worker', () => {
    it('takes no arguments', () => {
      expect(parseCommand(['worker'])).toStrictEqual({ kind: 'worker' });
      expect(usageError(() => parseCommand(['worker', 'now'])).message).toBe('Unexpected argument "now"');
    });
  });

  describe('migrate', () => {
    it('runs the regular migrations, or with --post-deployment every one', () => {
      expect(parseCommand(['migrate'])).toStrictEqual({ kind: 'migrate', postDeployment: false });
      expect(parseCommand(['migrate', '--post-deployment'])).toStrictEqual({ kind: 'migrate', postDeployment: true });
      expect(usageError(() => parseCommand(['migrate', 'now'])).message).toBe('Unexpected argument "now"');
      expect(() => parseCommand(['migrate', '--contract'])).toThrow(UsageError);
    });
  });

  it('refuses an unknown command', () => {
    expect(usageError(() => parseCommand(['plants', 'list'])).message).toBe('Unknown command "plants"');
  });

  it('asks for an action', () => {
    expect(usageError(() => parseCommand(['token'])).message).toBe('token needs an action: create, list or revoke');
  });

  it('refuses an unknown action', () => {
    expect(usageError(() => parseCommand(['token', 'delete', 'x'])).message).toBe('Unknown action "token delete"');
  });
});

describe(parseExpiresIn.name, () => {
  it.each([
    ['1m', MINUTE],
    ['90m', 90 * MINUTE],
    ['12h', 12 * HOUR],
    ['30d', 30 * DAY],
    ['3650d', 3650 * DAY],
    ['87600h', 3650 * DAY],
    ['5256000m', 3650 * DAY],
  ])('reads %p as %p ms', (text, ms) => {
    expect(parseExpiresIn(text)).toBe(ms);
  });

  it.each([
    '0m',
    '0d',
    '00d',
    '01d',
    '3651d',
    '87601h',
    '5256001m',
    '9999999d',
    '12345678m',
    '5w',
    '5s',
    '1.5h',
    '-1d',
    '+1d',
    ' 1d',
    '1d ',
    '1D',
    'd',
    '30',
    '',
  ])('refuses %p', (text) => {
    const error = usageError(() => parseExpiresIn(text));
    expect(error.name).toBe('UsageError');
    expect(error.message).toBe(
      `--expires-in takes a number of minutes, hours or days, e.g. 90m, 12h, 30d (at most 3650d); got "${text}"`,
    );
  });
});

describe(execute.name, () => {
  let tokens: { create: jest.Mock; list: jest.Mock; revoke: jest.Mock };
  let io: ReturnType<typeof fakeIo>;

  const run = (command: TokenCommand) => execute(command, tokens as unknown as TokensService, io);

  beforeEach(() => {
    tokens = { create: jest.fn(), list: jest.fn(), revoke: jest.fn() };
    io = fakeIo();
  });

  describe('create', () => {
    it('creates through the token service and prints the secret alone on the last line', async () => {
      tokens.create.mockResolvedValue({ secret: SECRET, token: token({ scopes: 'plants:read' }) });
      const command: CliCommand = {
        kind: 'create',
        subject: 'alice',
        scopes: ['plants:read'],
        expiresInMs: DAY,
        name: 'ci',
      };

      await expect(run(command)).resolves.toBe(EXIT_OK);
      expect(tokens.create).toHaveBeenCalledWith(
        expect.objectContaining({ subject: 'alice', scopes: ['plants:read'], expiresInMs: DAY, name: 'ci' }),
      );
      const lines = io.lines();
      expect(lines[lines.length - 1]).toBe(SECRET);
      expect(lines.slice(0, -1).join('\n')).not.toContain(SECRET);
      expect(lines[0]).toBe(
        'Created token 3f1c2a4e-0000-4000-8000-000000000001 for user "alice" (scopes: plants:read; does not expire).',
      );
      expect(io.err).not.toHaveBeenCalled();
    });

    it('prints the expiry when there is one', async () => {
      tokens.create.mockResolvedValue({
        secret: SECRET,
        token: token({ expiresAt: new Date('2026-02-01T00:00:00.000Z') }),
      });
      await run({ kind: 'create', subject: 'alice', scopes: [] });
      expect(io.lines()[0]).toContain('expires 2026-02-01T00:00:00.000Z');
    });

    it('passes on a TokenInputError', async () => {
      const error = new TokenInputError('A user id is 1 to 128 characters');
      tokens.create.mockRejectedValue(error);
      await expect(run({ kind: 'create', subject: 'a b', scopes: [] })).rejects.toBe(error);
      expect(io.out).not.toHaveBeenCalled();
    });
  });

  describe('list', () => {
    it('says so when there are no tokens', async () => {
      tokens.list.mockResolvedValue([]);
      await expect(run({ kind: 'list', subject: 'nobody' })).resolves.toBe(EXIT_OK);
      expect(tokens.list).toHaveBeenCalledWith('nobody');
      expect(io.lines()).toEqual(['No tokens.']);
    });

    it('prints an aligned table with one row per token and its status', async () => {
      tokens.list.mockResolvedValue([
        token({ id: 'id-active', name: 'laptop', lastUsedAt: new Date('2026-01-02T03:04:05.000Z') }),
        token({
          id: 'id-revoked',
          subject: 'bob',
          scopes: 'plants:read',
          revokedAt: new Date('2026-01-03T00:00:00.000Z'),
        }),
        token({ id: 'id-expired', expiresAt: new Date('2026-01-01T01:00:00.000Z') }),
      ]);

      await expect(run({ kind: 'list' })).resolves.toBe(EXIT_OK);
      expect(tokens.list).toHaveBeenCalledWith(undefined);

      const lines = io.lines();
      expect(lines).toHaveLength(4);
      expect(lines[0]).toMatch(/^ID +USER +NAME +SCOPES +CREATED +EXPIRES +LAST USED +STATUS$/);
      expect(lines[1].split(/ {2,}/)).toEqual([
        'id-active',
        'alice',
        'laptop',
        'plants:read plants:write',
        '2026-01-01T00:00:00.000Z',
        'never',
        '2026-01-02T03:04:05.000Z',
        'active',
      ]);
      expect(lines[2].split(/ {2,}/)).toEqual([
        'id-revoked',
        'bob',
        '-',
        'plants:read',
        '2026-01-01T00:00:00.000Z',
        'never',
        'never',
        'revoked',
      ]);
      expect(lines[3].split(/ {2,}/)).toEqual([
        'id-expired',
        'alice',
        '-',
        'plants:read plants:write',
        '2026-01-01T00:00:00.000Z',
        '2026-01-01T01:00:00.000Z',
        'never',
        'expired',
      ]);
      for (const column of ['USER', 'NAME', 'SCOPES', 'STATUS']) {
        const at = lines[0].indexOf(column);
        expect(lines.slice(1).every((line) => line[at - 1] === ' ' && line[at] !== ' ')).toBe(true);
      }
      expect(lines.every((line) => line === line.trimEnd())).toBe(true);
    });
  });

  describe('revoke', () => {
    it('reports a revocation', async () => {
      tokens.revoke.mockResolvedValue({ token: token(), revokedNow: true });
      await expect(run({ kind: 'revoke', reference: SECRET })).resolves.toBe(EXIT_OK);
      expect(tokens.revoke).toHaveBeenCalledWith(SECRET);
      expect(io.lines()).toEqual(['Revoked token 3f1c2a4e-0000-4000-8000-000000000001.']);
    });

    it('reports a token that was already revoked, still with success', async () => {
      tokens.revoke.mockResolvedValue({ token: token(), revokedNow: false });
      await expect(run({ kind: 'revoke', reference: 'x' })).resolves.toBe(EXIT_OK);
      expect(io.lines()).toEqual(['Token 3f1c2a4e-0000-4000-8000-000000000001 was already revoked.']);
    });

    it('fails with exit code 1 when nothing matches', async () => {
      tokens.revoke.mockResolvedValue(null);
      await expect(run({ kind: 'revoke', reference: 'nope' })).resolves.toBe(1);
      expect(io.err).toHaveBeenCalledWith('No token matches that token or id.');
      expect(io.out).not.toHaveBeenCalled();
    });
  });
});

describe(runCli.name, () => {
  let createContext: jest.SpyInstance;
  let app: { get: jest.Mock; close: jest.Mock };
  let tokens: { list: jest.Mock; create: jest.Mock };
  let io: ReturnType<typeof fakeIo>;

  beforeEach(() => {
    tokens = { list: jest.fn().mockResolvedValue([]), create: jest.fn() };
    app = { get: jest.fn(() => tokens), close: jest.fn().mockResolvedValue(undefined) };
    createContext = jest
      .spyOn(NestFactory, 'createApplicationContext')
      .mockResolvedValue(app as unknown as INestApplicationContext);
    io = fakeIo();
  });

  afterEach(() => jest.restoreAllMocks());

  it.each([[['token', 'create']], [['frobnicate']], [['token', 'list', '--nope']]])(
    'answers the usage error in %p with exit code 2 and the usage, booting nothing',
    async (argv) => {
      await expect(runCli(argv, io)).resolves.toBe(2);
      expect(io.err).toHaveBeenCalledTimes(1);
      const [message] = io.err.mock.calls[0] as [string];
      expect(message.endsWith(`\n\n${USAGE}`)).toBe(true);
      expect(message.length).toBeGreaterThan(USAGE.length + 2);
      expect(io.out).not.toHaveBeenCalled();
      expect(createContext).not.toHaveBeenCalled();
    },
  );

  it('prints help without booting anything', async () => {
    await expect(runCli(['--help'], io)).resolves.toBe(EXIT_OK);
    expect(io.lines()).toEqual([USAGE]);
    expect(USAGE).toContain('plantstore token create --user <id>');
    expect(createContext).not.toHaveBeenCalled();
  });

  it('runs a command in the CLI module and closes it', async () => {
    await expect(runCli(['token', 'list'], io)).resolves.toBe(0);
    expect(createContext).toHaveBeenCalledWith(CliModule, expect.anything());
    expect(app.get).toHaveBeenCalledWith(TokensService);
    expect(io.lines()).toEqual(['No tokens.']);
    expect(app.close).toHaveBeenCalledTimes(1);
  });

  it('answers a TokenInputError with its message and exit code 2', async () => {
    tokens.create.mockRejectedValue(new TokenInputError('A user id is 1 to 128 characters'));
    await expect(runCli(['token', 'create', '--user', 'a b'], io)).resolves.toBe(EXIT_USAGE);
    expect(io.err).toHaveBeenCalledWith('A user id is 1 to 128 characters');
    expect(app.close).toHaveBeenCalledTimes(1);
  });

  it('passes on other errors after closing', async () => {
    const outage = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    tokens.list.mockRejectedValue(outage);
    await expect(runCli(['token', 'list'], io)).rejects.toBe(outage);
    expect(app.close).toHaveBeenCalledTimes(1);
  });
});

describe(reseal.name, () => {
  const report = (fields: Partial<ResealReport>): ResealReport => ({
    name: 'webhook signing secrets',
    resealed: 0,
    changed: 0,
    unknownKeys: {},
    unreadable: 0,
    ...fields,
  });
  const stores = [{ name: 'webhook signing secrets' }, { name: 'stored idempotent answers' }] as SealedStore<unknown>[];
  let secrets: { configured: boolean; keyIds: string[]; reseal: jest.Mock };
  let io: ReturnType<typeof fakeIo>;

  beforeEach(() => {
    secrets = { configured: true, keyIds: ['1a2b3c4d', '9f8e7d6c'], reseal: jest.fn() };
    io = fakeIo();
  });
  const run = () => reseal({ kind: 'reseal', batchSize: 50 }, secrets as unknown as SecretsService, stores, io);

  it('reseals every store in batches of the size asked, and says the other keys can go', async () => {
    secrets.reseal
      .mockResolvedValueOnce(report({ resealed: 12 }))
      .mockResolvedValueOnce(report({ name: 'stored idempotent answers', resealed: 3 }));
    await expect(run()).resolves.toBe(EXIT_OK);
    expect(secrets.reseal).toHaveBeenCalledWith(stores[0], 50);
    expect(secrets.reseal).toHaveBeenCalledWith(stores[1], 50);
    expect(io.lines()).toEqual([
      'Resealing under key 1a2b3c4d, the first of WEBHOOK_SECRET_KEY.',
      'webhook signing secrets: 12 resealed',
      'stored idempotent answers: 3 resealed',
      'Nothing is left sealed under another key: once every instance seals with 1a2b3c4d, 9f8e7d6c can be removed from WEBHOOK_SECRET_KEY.',
    ]);
    expect(io.err).not.toHaveBeenCalled();
  });

  it('fails with exit code 1, naming what was left, when something could not be resealed', async () => {
    secrets.reseal
      .mockResolvedValueOnce(report({ resealed: 1, unknownKeys: { '55aa55aa': 2 }, changed: 1 }))
      .mockResolvedValueOnce(report({ name: 'stored idempotent answers', unreadable: 1 }));
    await expect(run()).resolves.toBe(EXIT_FAILURE);
    expect(io.lines()).toEqual([
      'Resealing under key 1a2b3c4d, the first of WEBHOOK_SECRET_KEY.',
      'webhook signing secrets: 1 resealed, 2 left under key 55aa55aa, which is not in WEBHOOK_SECRET_KEY, 1 changed meanwhile',
      'stored idempotent answers: 0 resealed, 1 unreadable (malformed or altered)',
    ]);
    expect(io.err).toHaveBeenCalledWith(
      'Some values were not resealed: keep the keys they need, and run the command again.',
    );
  });

  it('needs WEBHOOK_SECRET_KEY', async () => {
    secrets.configured = false;
    await expect(run()).resolves.toBe(EXIT_FAILURE);
    expect(secrets.reseal).not.toHaveBeenCalled();
    expect(io.err).toHaveBeenCalledWith(expect.stringMatching(/^secrets reseal needs WEBHOOK_SECRET_KEY/));
  });
});

describe(migrate.name, () => {
  const dataSource = {} as DataSource;
  beforeEach(() => {
    applied.mockReset();
    pending.mockReset().mockResolvedValue([]);
    run.mockReset().mockResolvedValue(undefined);
  });

  it('names each migration this command applied, at its start and after, then says the schema is up to date', async () => {
    // Opening the context applied one regular migration; the post-deployment run, one more.
    applied.mockReturnValueOnce(['WebhookIndexes1799000000000', 'PreviousReleaseColumnsDropped1764600000000']);
    const io = fakeIo();
    await expect(migrate({ kind: 'migrate', postDeployment: true }, dataSource, io)).resolves.toBe(EXIT_OK);
    expect(run).toHaveBeenCalledWith(dataSource, 'post-deployment');
    expect(io.lines()).toEqual([
      'applied WebhookIndexes1799000000000',
      'applied PreviousReleaseColumnsDropped1764600000000',
      'The schema is up to date.',
    ]);
  });

  it('says when no migration was pending, and which post-deployment ones wait', async () => {
    applied.mockReturnValueOnce([]);
    pending.mockResolvedValue(['PreviousReleaseColumnsDropped1764600000000']);
    const io = fakeIo();
    await expect(migrate({ kind: 'migrate', postDeployment: false }, dataSource, io)).resolves.toBe(EXIT_OK);
    expect(run).not.toHaveBeenCalled();
    expect(io.lines()).toEqual([
      'No migration was pending.',
      'Post-deployment migrations pending (run migrate --post-deployment once every instance runs this release): ' +
        'PreviousReleaseColumnsDropped1764600000000',
    ]);
  });
});

describe(CliLogger.name, () => {
  let stderr: jest.SpyInstance;
  let stdout: jest.SpyInstance;
  beforeEach(() => {
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  });
  afterEach(() => jest.restoreAllMocks());
  const written = () => stderr.mock.calls.map(([text]) => String(text)).join('');

  it("for migrate, shows the migrations' progress on stderr: the database's info lines, the tool's among them", () => {
    const logger = new CliLogger(true);
    logger.log('Migration PlantsByName1799000000000 has been executed successfully.', DATABASE_LOG_CONTEXT);
    logger.log('pt-online-schema-change: Copying `plantstore`.`plants`:  45% 00:11 remain', DATABASE_LOG_CONTEXT);
    logger.log('CliModule dependencies initialized', 'InstanceLoader');
    expect(written()).toContain('Migration PlantsByName1799000000000 has been executed successfully.');
    expect(written()).toContain('pt-online-schema-change: Copying `plantstore`.`plants`:  45% 00:11 remain');
    // Nest's own lines of its start are no progress of the command's.
    expect(written()).not.toContain('CliModule dependencies initialized');
    expect(stdout).not.toHaveBeenCalled();
  });

  it('for any other command, shows warnings and errors only', () => {
    const logger = new CliLogger();
    logger.log('Migration PlantsByName1799000000000 has been executed successfully.', DATABASE_LOG_CONTEXT);
    expect(stderr).not.toHaveBeenCalled();
    logger.warn('Statement took 2000 ms: SELECT 1', DATABASE_LOG_CONTEXT);
    expect(written()).toContain('Statement took 2000 ms: SELECT 1');
  });

  it('is the logger runCli opens the context of migrate with', async () => {
    const open = jest.spyOn(NestFactory, 'createApplicationContext').mockResolvedValue({
      get: jest.fn(() => dataSource),
      close: jest.fn().mockResolvedValue(undefined),
    } as unknown as INestApplicationContext);
    const dataSource = {} as DataSource;
    applied.mockReturnValue([]);
    pending.mockResolvedValue([]);
    await expect(runCli(['migrate'], fakeIo())).resolves.toBe(EXIT_OK);
    const { logger } = open.mock.calls[0][1] as { logger: CliLogger };
    logger.log('Migration PlantsByName1799000000000 has been executed successfully.', DATABASE_LOG_CONTEXT);
    expect(written()).toContain('PlantsByName1799000000000');
  });
});
