import Database from 'better-sqlite3';
import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { Server, Socket, connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { SETTINGS } from '../src/config/configuration';
import { STARTUP_RETRY_FIRST_DELAY_MS } from '../src/database/startup-retry';
import { prepareDatabase, testDatabases } from './utils/databases';
import { builtModule } from './utils/service-build';
import { ServiceProcess, freePort, spawnServiceProcess } from './utils/service-process';
import { waitFor } from './utils/wait-for';

const ROOT = join(__dirname, '..');
/** In every URL below; it must never be written. */
const PASSWORD = 'start-up-secret-7f3a';
/** What a process spent loading the service may take on a loaded machine, and then some. */
const LOADED_MS = 30_000;
/** How long the database below keeps a starting instance waiting. */
const WAIT_MS = 1500;

interface Line {
  /** When the test read it. */
  at: number;
  text: string;
}

/** The lines of `stream` as they arrive, each with when it arrived. */
function linesOf(stream: Readable): Line[] {
  const lines: Line[] = [];
  let partial = '';
  stream.on('data', (chunk: Buffer) => {
    const at = Date.now();
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) if (text !== '') lines.push({ at, text });
  });
  return lines;
}

interface LogLine {
  level: string;
  time: string;
  context?: string;
  msg: string;
}

/** Every line parsed as a JSON log line: a line that is not one fails the test. */
function jsonLines(lines: Line[]): Array<LogLine & { at: number; ms: number }> {
  return lines.map(({ at, text }) => {
    let parsed: LogLine;
    try {
      parsed = JSON.parse(text) as LogLine;
    } catch {
      throw new Error(`Not a JSON line: ${text}`);
    }
    expect(parsed).toEqual(
      expect.objectContaining({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) }),
    );
    return { ...parsed, at, ms: Date.parse(parsed.time) };
  });
}

/** A MySQL URL on a port where nothing listens. */
async function closedDatabaseUrl(): Promise<string> {
  return `mysql://plantstore:${PASSWORD}@127.0.0.1:${await freePort()}/plantstore`;
}

interface Started {
  service: ServiceProcess;
  stdout: Line[];
  stderr: Line[];
  spawnedAt: number;
}

async function startService(env: Record<string, string>): Promise<Started> {
  const spawnedAt = Date.now();
  // Production, as an operator runs it: JSON lines, and no development token printed among them.
  const service = await spawnServiceProcess({ NODE_ENV: 'production', LOG_FORMAT: 'json', ...env });
  return { service, stdout: linesOf(service.child.stdout!), stderr: linesOf(service.child.stderr!), spawnedAt };
}

const attemptLines = (stdout: Line[]) =>
  stdout.filter(({ text }) => text.includes('Database unreachable at start-up (attempt'));

describe('An instance that cannot reach its database at start-up', () => {
  let running: ServiceProcess | undefined;
  afterEach(() => running?.stop('SIGKILL'));

  it('writes JSON lines from the first on as they happen, each failed attempt with why; stops at SIGTERM', async () => {
    const { service, stdout, stderr, spawnedAt } = await startService({
      DATABASE_URL: await closedDatabaseUrl(),
      DB_STARTUP_TIMEOUT: '60s',
    });
    running = service;
    await waitFor(() => attemptLines(stdout).length >= 2 || service.child.exitCode !== null, {
      timeoutMs: LOADED_MS,
      what: 'two failed attempts logged',
    });
    // Written while it is still trying, not when it gives up.
    expect(service.child.exitCode).toBeNull();
    expect(stdout[0].at - spawnedAt).toBeLessThan(LOADED_MS);

    const lines = jsonLines(stdout);
    expect(lines[0]).toMatchObject({ level: 'info', context: 'NestFactory', msg: 'Starting Nest application...' });
    const attempts = lines.filter((line) => line.msg.startsWith('Database unreachable'));
    for (const [i, attempt] of attempts.entries()) {
      expect(attempt).toMatchObject({ level: 'warn', context: 'Database' });
      expect(attempt.msg).toMatch(new RegExp(`\\(attempt ${i + 1}\\): connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+; `));
      // Handed to stdout when it was logged.
      expect(attempt.at - attempt.ms).toBeLessThan(3000);
    }
    // The wait between two attempts is in their times.
    expect(attempts[1].ms - attempts[0].ms).toBeGreaterThanOrEqual(STARTUP_RETRY_FIRST_DELAY_MS - 50);

    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    await expect(service.exited).resolves.toBe(1);
    expect(Date.now() - signalledAt).toBeLessThan(5000);
    const all = jsonLines(stdout);
    expect(all[all.length - 1]).toMatchObject({
      context: 'Shutdown',
      msg: 'SIGTERM while starting: stopping before serving',
    });
    expect(stderr).toEqual([]);
    expect(service.output()).not.toContain(PASSWORD);
  }, 60_000);

  it('exits with 1 by itself once DB_STARTUP_TIMEOUT has passed, saying why, in JSON', async () => {
    const { service, stdout, stderr } = await startService({
      DATABASE_URL: await closedDatabaseUrl(),
      DB_STARTUP_TIMEOUT: '1s',
    });
    running = service;
    await expect(service.exited).resolves.toBe(1);

    const lines = jsonLines(stdout);
    expect(lines.filter((line) => line.msg.startsWith('Database unreachable')).length).toBeGreaterThanOrEqual(2);
    const last = lines[lines.length - 1];
    expect(last.level).toBe('error');
    expect(last.msg).toMatch(
      /^The database could not be reached within 1 s \(\d+ attempts\); the last failed with connect ECONNREFUSED /,
    );
    // It kept trying for the whole second, and not much longer.
    expect(last.ms - lines[0].ms).toBeGreaterThanOrEqual(1000);
    expect(last.ms - lines[0].ms).toBeLessThan(10_000);
    expect(stderr).toEqual([]);
    expect(service.output()).not.toContain(PASSWORD);
  }, 60_000);
});

/** A command run as an operator runs it: in an empty directory, configured by `env` alone. */
async function runCommand(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: mkdtempSync(join(tmpdir(), 'plant-store-command-')),
    env: {
      PATH: process.env.PATH ?? '',
      // The TypeORM CLI's command below loads ormconfig.ts through ts-node.
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
      TS_NODE_TRANSPILE_ONLY: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr };
}

describe('The command lines on a database they cannot reach', () => {
  it('plantstore reports each failed attempt on stderr and fails after DB_STARTUP_TIMEOUT', async () => {
    const { code, stdout, stderr } = await runCommand([builtModule('cli'), 'token', 'list'], {
      DATABASE_URL: await closedDatabaseUrl(),
      DB_STARTUP_TIMEOUT: '1s',
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/Database unreachable at start-up \(attempt 1\): connect ECONNREFUSED /);
    expect(stderr.trimEnd().split('\n').pop()).toMatch(
      /^plantstore: The database could not be reached within 1 s \(\d+ attempts\); the last failed with connect ECONNREFUSED /,
    );
    expect(stdout + stderr).not.toContain(PASSWORD);
  }, 60_000);

  it('migration:run (the TypeORM CLI) tries as long, reporting each attempt, then fails', async () => {
    const { code, stdout, stderr } = await runCommand(
      [require.resolve('typeorm/cli-ts-node-commonjs.js'), '-d', join(ROOT, 'ormconfig.ts'), 'migration:run'],
      { DATABASE_URL: await closedDatabaseUrl(), DB_STARTUP_TIMEOUT: '1s' },
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/Database unreachable at start-up \(attempt 1\): connect ECONNREFUSED /);
    expect(stderr).toMatch(/The database could not be reached within 1 s \(\d+ attempts\)/);
    expect(stdout + stderr).not.toContain(PASSWORD);
  }, 60_000);
});

/**
 * A malformed value of every setting, each wrong in the way an operator gets it wrong, and each one
 * a library would otherwise read later (Express, TypeORM, ioredis, the listener) among them. Typed
 * by the settings table: a new setting is given one here. Null: any text is a valid value.
 */
const MALFORMED: Record<keyof typeof SETTINGS, string | null> = {
  NODE_ENV: 'staging',
  HOST: 'http://localhost',
  PORT: '70000',
  CORS_ORIGINS: 'app.example.com',
  TRUST_PROXY: 'maybe',
  SHUTDOWN_TIMEOUT_MS: 'soon',
  SHUTDOWN_DELAY_MS: '-5',
  DATABASE_URL: `mysql://plantstore:${PASSWORD}@db:notaport/plantstore`,
  // Any path names a file.
  SQLITE_PATH: null,
  DB_POOL_SIZE: '0',
  DB_CONNECT_TIMEOUT_MS: '99',
  DB_QUERY_TIMEOUT_MS: '1e3',
  DB_STARTUP_TIMEOUT: '60',
  PLANTS_MAX_PAGE: 'many',
  PLANTS_DEFAULT_PAGE: '0',
  TOKEN_CACHE_TTL_MS: '-1',
  OIDC_ISSUER: 'id.example.com',
  // Empty is unset, and OIDC_ISSUER is set: wrong by its absence.
  OIDC_AUDIENCE: '',
  OIDC_OWNER_CLAIM: 'org id',
  OIDC_JWKS_CACHE_MS: '10',
  LOG_LEVEL: 'verbose',
  LOG_FORMAT: 'xml',
  METRICS_PORT: 'abc',
  RATE_LIMIT_PER_MINUTE: '0',
  REDIS_URL: `redis://:${PASSWORD}@cache:notaport`,
  WEBHOOK_SECRET_KEY: 'short',
  WEBHOOK_RETRY_SCHEDULE: '5s,,5m',
  WEBHOOK_DISABLE_AFTER: '5',
  WEBHOOK_TIMEOUT_MS: '10001',
  WEBHOOK_ALLOW_HTTP: 'yes',
  WEBHOOK_ALLOW_PRIVATE: 'no',
  WEBHOOK_POLL_INTERVAL_MS: '5',
  WEBHOOK_DELIVERY: 'maybe',
  WEBHOOK_CONCURRENCY: '0',
  WEBHOOK_SUBSCRIPTION_CONCURRENCY: '0',
  WEBHOOK_OWNER_CONCURRENCY: '1001',
  IDEMPOTENCY_TTL: '24',
};

/** A stack trace's frame, as Node and the log formats write it. */
const STACK_FRAME = /(^|\\n|\n)\s+at \S+/m;

const SERVICE = [builtModule('main')];
const CLI = [builtModule('cli')];

describe('A process started with wrong settings', () => {
  it('names each wrong variable in one line of its own, without a stack, and exits with 1', async () => {
    const env = Object.fromEntries(Object.entries(MALFORMED).filter(([, value]) => value !== null)) as Record<
      string,
      string
    >;
    const { code, stdout, stderr } = await runCommand(SERVICE, env);
    expect(code).toBe(1);
    const output = stdout + stderr;
    const lines = output.split('\n');
    for (const name of Object.keys(env)) {
      const naming = lines.filter((line) => line.includes(`Invalid configuration: ${name} `));
      expect({ name, naming: naming.length }).toEqual({ name, naming: 1 });
    }
    expect(output).not.toMatch(STACK_FRAME);
    expect(output).not.toContain(PASSWORD);
  }, 60_000);

  it.each(['maybe', '10.0.0.0/99', 'loopback,,10.0.0.1'])(
    'refuses TRUST_PROXY=%p, which Express cannot compile, in one JSON line naming it, with no stack',
    async (value) => {
      const { code, stdout, stderr } = await runCommand(SERVICE, {
        NODE_ENV: 'production',
        LOG_FORMAT: 'json',
        TRUST_PROXY: value,
      });
      expect(code).toBe(1);
      expect(stderr).toBe('');
      const lines = stdout.split('\n').filter((text) => text !== '');
      const errors = jsonLines(lines.map((text) => ({ at: 0, text }))).filter((line) => line.level === 'error');
      expect(errors).toEqual([
        expect.objectContaining({
          msg: expect.stringMatching(/^Invalid configuration: TRUST_PROXY must be true, false, a number of proxy hops/),
        }),
      ]);
      expect(errors[0].msg).toContain(`(got ${JSON.stringify(value)})`);
      expect(errors[0]).not.toHaveProperty('err');
    },
    60_000,
  );

  it('plantstore names each wrong variable once, on stderr, without a stack', async () => {
    const { code, stdout, stderr } = await runCommand([...CLI, 'token', 'list'], {
      TRUST_PROXY: '10.0.0.0/99',
      DATABASE_URL: MALFORMED.DATABASE_URL!,
    });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trimEnd().split('\n')).toEqual([
      'plantstore: Invalid configuration:',
      expect.stringMatching(
        /^ {2}- TRUST_PROXY must be .*"10\.0\.0\.0\/99" has a prefix length or netmask out of range/,
      ),
      expect.stringMatching(
        /^ {2}- DATABASE_URL must be .*; its port is not a number from 1 to 65535 \(got "mysql:\/\/\*\*\*@db:notaport\/plantstore"\)$/,
      ),
    ]);
  }, 60_000);
});

/**
 * A database that keeps a starting instance waiting until `open()`: an SQLite file another process
 * holds locked, or a MySQL server slow to accept connections (a proxy that holds them).
 */
interface HeldDatabase {
  env: Record<string, string>;
  open: () => Promise<void>;
  close: () => Promise<void>;
}

async function holdDatabase(name: 'sqlite' | 'mysql'): Promise<HeldDatabase> {
  const { env } = await prepareDatabase(name);
  if (name === 'sqlite') {
    const holder = new Database(env.SQLITE_PATH);
    holder.exec('BEGIN EXCLUSIVE');
    let open = false;
    const release = () => {
      if (open) return;
      open = true;
      holder.exec('COMMIT');
      holder.close();
    };
    return { env, open: async () => release(), close: async () => release() };
  }
  const target = new URL(env.DATABASE_URL);
  let opened: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (opened = resolve));
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => client.destroy());
    void gate.then(() => {
      const upstream = connect(Number(target.port || 3306), target.hostname);
      sockets.add(upstream);
      upstream.on('error', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
  const proxied = new URL(target);
  proxied.port = String(port);
  return {
    env: { ...env, DATABASE_URL: proxied.toString() },
    open: async () => opened(),
    close: async () => {
      opened();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe.each(testDatabases())('Start-up lines on %s', (name) => {
  it(`carry the time each was logged: a wait of ${WAIT_MS} ms for the database shows between them`, async () => {
    const database = await holdDatabase(name);
    let service: ServiceProcess | undefined;
    try {
      const started = await startService(database.env);
      service = started.service;
      const { stdout } = started;
      // Once the first line is out, the instance is starting, and waits for the database from about
      // then on. (Had the lines been held back, the wait would begin all the same, so the times below
      // are checked rather than a missing line.)
      await waitFor(() => stdout.length > 0 || started.service.child.exitCode !== null, {
        timeoutMs: LOADED_MS,
        what: 'the first line',
      }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
      await database.open();
      const openedAt = Date.now();
      await waitFor(() => stdout.some(({ text }) => text.includes('Nest application successfully started')), {
        timeoutMs: 20_000,
        what: 'the instance started',
      });

      const lines = jsonLines(stdout);
      const times = lines.map((line) => line.ms);
      expect(times).toEqual([...times].sort((a, b) => a - b));
      const timeOf = (msg: string) => lines.find((line) => line.msg === msg)!.ms;
      // Logged before the wait, and stamped then: at least the wait before the database opened.
      expect(openedAt - timeOf('Starting Nest application...')).toBeGreaterThanOrEqual(WAIT_MS);
      // Logged once the database answered, and stamped then.
      expect(timeOf('Nest application successfully started')).toBeGreaterThanOrEqual(openedAt - 50);
      expect(new Set(times).size).toBeGreaterThan(2);
    } finally {
      await database.close();
      await service?.stop();
    }
  }, 90_000);
});
