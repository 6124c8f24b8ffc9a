import express from 'express';
import { DriverUtils } from 'typeorm/driver/DriverUtils.js';
import { AppConfig, ConfigValidationError, SETTINGS, loadConfig, loadLogConfig } from './configuration';

/** What a setting is when unset, as its declaration says: the spec checks how it is read, not its value. */
const byDefault = <Name extends keyof typeof SETTINGS>(name: Name): (typeof SETTINGS)[Name]['defaultValue'] =>
  SETTINGS[name].defaultValue;

/** The configuration of an empty environment: each field from the setting it is read from. */
const DEFAULTS: AppConfig = {
  env: byDefault('NODE_ENV'),
  host: undefined,
  port: byDefault('PORT'),
  database: { type: 'sqlite', path: byDefault('SQLITE_PATH') },
  databaseStartup: { timeoutMs: byDefault('DB_STARTUP_TIMEOUT') },
  plants: { maxPage: byDefault('PLANTS_MAX_PAGE'), defaultPage: byDefault('PLANTS_MAX_PAGE') },
  auth: { tokenCacheTtlMs: byDefault('TOKEN_CACHE_TTL_MS') },
  oidc: null,
  // LOG_FORMAT unset: pretty, since NODE_ENV is development by default.
  log: { level: byDefault('LOG_LEVEL'), pretty: true },
  metrics: { port: byDefault('METRICS_PORT') },
  rateLimit: { perMinute: byDefault('RATE_LIMIT_PER_MINUTE'), redisUrl: undefined },
  http: { corsOrigins: null, trustProxy: byDefault('TRUST_PROXY') },
  shutdown: { delayMs: byDefault('SHUTDOWN_DELAY_MS'), timeoutMs: byDefault('SHUTDOWN_TIMEOUT_MS') },
  secrets: { keys: [] },
  webhooks: {
    retryScheduleMs: byDefault('WEBHOOK_RETRY_SCHEDULE'),
    disableAfterMs: byDefault('WEBHOOK_DISABLE_AFTER'),
    timeoutMs: byDefault('WEBHOOK_TIMEOUT_MS'),
    allowHttp: byDefault('WEBHOOK_ALLOW_HTTP'),
    allowPrivate: byDefault('WEBHOOK_ALLOW_PRIVATE'),
    deliver: byDefault('WEBHOOK_DELIVERY'),
    pollIntervalMs: byDefault('WEBHOOK_POLL_INTERVAL_MS'),
    concurrency: byDefault('WEBHOOK_CONCURRENCY'),
    subscriptionConcurrency: byDefault('WEBHOOK_SUBSCRIPTION_CONCURRENCY'),
    ownerConcurrency: byDefault('WEBHOOK_OWNER_CONCURRENCY'),
  },
  idempotency: { ttlMs: byDefault('IDEMPOTENCY_TTL') },
};

function configError(env: Record<string, unknown>): ConfigValidationError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) return error;
    throw error;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe(loadConfig.name, () => {
  it('applies the defaults to an empty environment', () => {
    expect(loadConfig({})).toEqual(DEFAULTS);
  });

  it('ignores variables it does not know', () => {
    expect(loadConfig({ PATH: '/usr/bin', HOME: '/root', npm_config_cache: '/tmp' })).toEqual(DEFAULTS);
  });

  it('reads every variable it knows', () => {
    expect(
      loadConfig({
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: '8080',
        DATABASE_URL: 'mysql://app:secret@db:3306/plants',
        DB_POOL_SIZE: '20',
        DB_CONNECT_TIMEOUT_MS: '2500',
        DB_QUERY_TIMEOUT_MS: '4000',
        DB_STARTUP_TIMEOUT: '5m',
        PLANTS_MAX_PAGE: '50',
        PLANTS_DEFAULT_PAGE: '20',
        TOKEN_CACHE_TTL_MS: '0',
        OIDC_ISSUER: 'https://id.example.com/realms/plants',
        OIDC_AUDIENCE: 'https://plants.example.com',
        OIDC_OWNER_CLAIM: 'org_id',
        OIDC_JWKS_CACHE_MS: '60000',
        LOG_LEVEL: 'debug',
        LOG_FORMAT: 'json',
        METRICS_PORT: '9100',
        RATE_LIMIT_PER_MINUTE: '120',
        REDIS_URL: 'redis://:pw@cache:6379/2',
        CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
        TRUST_PROXY: 'loopback, 10.0.0.0/8',
        SHUTDOWN_TIMEOUT_MS: '25000',
        SHUTDOWN_DELAY_MS: '5000',
        IDEMPOTENCY_TTL: '90m',
      }),
    ).toEqual({
      env: 'production',
      host: '127.0.0.1',
      port: 8080,
      database: {
        type: 'mysql',
        url: 'mysql://app:secret@db:3306/plants',
        poolSize: 20,
        connectTimeoutMs: 2500,
        queryTimeoutMs: 4000,
      },
      databaseStartup: { timeoutMs: 300_000 },
      plants: { maxPage: 50, defaultPage: 20 },
      auth: { tokenCacheTtlMs: 0 },
      oidc: {
        issuer: 'https://id.example.com/realms/plants',
        audience: 'https://plants.example.com',
        ownerClaim: 'org_id',
        jwksCacheMs: 60000,
      },
      log: { level: 'debug', pretty: false },
      metrics: { port: 9100 },
      rateLimit: { perMinute: 120, redisUrl: 'redis://:pw@cache:6379/2' },
      http: { corsOrigins: ['https://app.example.com', 'http://localhost:5173'], trustProxy: 'loopback,10.0.0.0/8' },
      shutdown: { delayMs: 5000, timeoutMs: 25000 },
      secrets: DEFAULTS.secrets,
      webhooks: DEFAULTS.webhooks,
      idempotency: { ttlMs: 5_400_000 },
    });
  });

  it('logs JSON outside development unless LOG_FORMAT says otherwise', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).log.pretty).toBe(false);
    expect(loadConfig({ NODE_ENV: 'test' }).log.pretty).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', LOG_FORMAT: 'pretty' }).log.pretty).toBe(true);
    expect(loadConfig({ LOG_FORMAT: 'json' }).log.pretty).toBe(false);
  });

  it.each([
    ['true', true],
    ['false', false],
    ['2', 2],
    ['172.16.0.1', '172.16.0.1'],
  ])('reads TRUST_PROXY=%p as %p', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).http.trustProxy).toEqual(expected);
  });

  describe('TRUST_PROXY, read by Express', () => {
    it.each([
      'loopback',
      'loopback, 10.0.0.0/8',
      '::1',
      '10.0.0.0/255.0.0.0',
      'uniquelocal,linklocal',
      '2001:db8::/32',
    ])('takes %p, which Express compiles as it is read', (value) => {
      const { trustProxy } = loadConfig({ TRUST_PROXY: value }).http;
      expect(() => express().set('trust proxy', trustProxy)).not.toThrow();
    });

    it.each([
      ['maybe', '"maybe" is not an IP address, a subnet or one of those names'],
      ['10.0.0.0/99', '"10.0.0.0/99" has a prefix length or netmask out of range'],
      ['::1/129', '"::1/129" has a prefix length or netmask out of range'],
      ['loopback,,10.0.0.1', '"" is not an IP address'],
      ['10.0.0.1, proxy.internal', '"proxy.internal" is not an IP address'],
      ['300.1.1.1', '"300.1.1.1" is not an IP address'],
    ])('refuses %p, which Express cannot compile, saying which entry is wrong', (value, why) => {
      expect(() => express().set('trust proxy', value)).toThrow();
      const { problems } = configError({ TRUST_PROXY: value });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(
        /^TRUST_PROXY must be true, false, a number of proxy hops, or a comma-separated list/,
      );
      expect(problems[0]).toContain(why);
      expect(problems[0]).toContain(`(got ${JSON.stringify(value)})`);
    });
  });

  describe('DATABASE_URL, read by TypeORM', () => {
    it.each([
      ['mysql://app:s%40cret@db:3306/plants', { host: 'db', port: 3306, username: 'app', password: 's@cret' }],
      ['mysql://app:pw@db/plants', { host: 'db', database: 'plants' }],
      ['mariadb://root@10.0.0.5:3307/plants', { host: '10.0.0.5', port: 3307, username: 'root' }],
    ])('takes %p, which TypeORM reads as %p', (value, read) => {
      const { url } = loadConfig({ DATABASE_URL: value }).database as { url: string };
      expect(DriverUtils.buildDriverOptions({ url })).toMatchObject(read);
    });

    it.each([
      ['mysql://app:p%zz@db/plants', 'its user name or password is not valid percent-encoding'],
      ['mysql://app:pw@db:notaport/plants', 'its port is not a number from 1 to 65535'],
      ['mysql://app:pw@db:99999/plants', 'its port is not a number from 1 to 65535'],
      ['mysql://app:pw@[::1]:3306/plants', 'an IPv6 address cannot be read from it: use a host name'],
      ['postgres://app:pw@db/plants', 'its scheme is not mysql or mariadb'],
    ])('refuses %p: %s, never quoting the password', (value, why) => {
      const { problems } = configError({ DATABASE_URL: value });
      expect(problems).toEqual([expect.stringMatching(/^DATABASE_URL must be a URL of the form mysql:\/\//)]);
      expect(problems[0]).toContain(`; ${why} (got "`);
      expect(problems[0]).not.toMatch(/\bpw\b|p%zz/);
    });
  });

  it.each(['127.0.0.1', '::', '0.0.0.0', 'localhost', 'plant-store.internal', 'api_1'])('takes HOST=%p', (host) => {
    expect(loadConfig({ HOST: host }).host).toBe(host);
  });

  it.each(['http://localhost', '127.0.0.1:3000', 'local host', '-bad.example'])(
    'refuses HOST=%p, which the listener would look up as a name and fail on',
    (host) => {
      expect(configError({ HOST: host }).problems).toEqual([
        `HOST must be an IP address or a host name, such as 127.0.0.1, :: or localhost (got ${JSON.stringify(host)})`,
      ]);
    },
  );

  it.each(['abc', '70000', '-1'])('names a wrong integer in one line saying its range (PORT=%p)', (port) => {
    expect(configError({ PORT: port }).problems).toEqual([
      `PORT must be an integer from 0 to 65535 (got ${JSON.stringify(port)})`,
    ]);
  });

  it('reads CORS_ORIGINS=* as any origin', () => {
    expect(loadConfig({ CORS_ORIGINS: '*' }).http.corsOrigins).toBe('*');
  });

  const MYSQL_DEFAULTS = {
    poolSize: byDefault('DB_POOL_SIZE'),
    connectTimeoutMs: byDefault('DB_CONNECT_TIMEOUT_MS'),
    queryTimeoutMs: byDefault('DB_QUERY_TIMEOUT_MS'),
  };

  it('gives a MySQL URL the pool and timeout defaults', () => {
    expect(loadConfig({ DATABASE_URL: 'mysql://root@localhost/test' }).database).toEqual({
      type: 'mysql',
      url: 'mysql://root@localhost/test',
      ...MYSQL_DEFAULTS,
    });
  });

  it('marks a mariadb:// URL as MariaDB and hands mysql2 a mysql:// URL', () => {
    expect(loadConfig({ DATABASE_URL: 'mariadb://root@localhost:3306/test' }).database).toEqual({
      type: 'mariadb',
      url: 'mysql://root@localhost:3306/test',
      ...MYSQL_DEFAULTS,
    });
  });

  it('uses SQLITE_PATH when there is no DATABASE_URL', () => {
    expect(loadConfig({ SQLITE_PATH: ':memory:' }).database).toEqual({ type: 'sqlite', path: ':memory:' });
  });

  it('prefers DATABASE_URL over SQLITE_PATH', () => {
    expect(loadConfig({ SQLITE_PATH: ':memory:', DATABASE_URL: 'mysql://root@localhost/test' }).database.type).toBe(
      'mysql',
    );
  });

  it('gives a list page PLANTS_MAX_PAGE plants by default, unless PLANTS_DEFAULT_PAGE says otherwise', () => {
    expect(loadConfig({ PLANTS_MAX_PAGE: '30' }).plants).toEqual({ maxPage: 30, defaultPage: 30 });
    expect(loadConfig({ PLANTS_DEFAULT_PAGE: '50' }).plants).toEqual({
      maxPage: byDefault('PLANTS_MAX_PAGE'),
      defaultPage: 50,
    });
  });

  it.each(Object.entries(SETTINGS).filter(([, setting]) => setting.default !== undefined))(
    'reads %s set to its default, written as text, as the default',
    (name, setting) => {
      expect(loadConfig({ [name]: setting.default })).toEqual(DEFAULTS);
    },
  );

  it('trims integers written with surrounding spaces', () => {
    expect(loadConfig({ PORT: ' 8080 ' }).port).toBe(8080);
  });

  it('reads DB_STARTUP_TIMEOUT as a duration, 0s meaning one attempt', () => {
    expect(loadConfig({ DB_STARTUP_TIMEOUT: '0s' }).databaseStartup.timeoutMs).toBe(0);
    expect(loadConfig({ DB_STARTUP_TIMEOUT: '1500ms' }).databaseStartup.timeoutMs).toBe(1500);
    expect(loadConfig({ DB_STARTUP_TIMEOUT: '1h' }).databaseStartup.timeoutMs).toBe(3_600_000);
  });

  it('accepts port 0 (any free port) and 65535', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
  });

  it('treats empty strings as unset', () => {
    expect(
      loadConfig({
        NODE_ENV: '',
        HOST: '',
        PORT: '',
        DATABASE_URL: '',
        SQLITE_PATH: '',
        DB_POOL_SIZE: '',
        DB_CONNECT_TIMEOUT_MS: '',
        PLANTS_MAX_PAGE: '',
        REDIS_URL: '',
        CORS_ORIGINS: '',
        TRUST_PROXY: '',
      }),
    ).toEqual(DEFAULTS);
  });

  it.each(['abc', '70000', '65536', '-1', '1e3', '3000abc', '80.5', '0x50'])(
    'refuses PORT=%p with a ConfigValidationError naming PORT and the value',
    (port) => {
      const error = configError({ PORT: port });
      expect(error.name).toBe('ConfigValidationError');
      expect(error.message).toMatch(/^Invalid configuration:\n/);
      expect(error.message).toContain('PORT');
      expect(error.message).toContain(`(got ${JSON.stringify(port)})`);
    },
  );

  it.each([
    ['NODE_ENV', 'staging'],
    ['DATABASE_URL', 'postgres://localhost/plants'],
    ['DATABASE_URL', 'mysql://'],
    ['DATABASE_URL', 'mysql://host with space/db'],
    ['DB_POOL_SIZE', '0'],
    ['DB_POOL_SIZE', '1001'],
    ['DB_CONNECT_TIMEOUT_MS', '99'],
    ['DB_CONNECT_TIMEOUT_MS', '60001'],
    ['DB_QUERY_TIMEOUT_MS', '99'],
    ['DB_STARTUP_TIMEOUT', '60'],
    ['DB_STARTUP_TIMEOUT', '2h'],
    ['DB_STARTUP_TIMEOUT', '1d'],
    ['PLANTS_MAX_PAGE', '0'],
    ['PLANTS_MAX_PAGE', '10001'],
    ['PLANTS_MAX_PAGE', 'many'],
    ['PLANTS_DEFAULT_PAGE', '0'],
    ['PLANTS_DEFAULT_PAGE', '10001'],
    ['TOKEN_CACHE_TTL_MS', '-1'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_FORMAT', 'xml'],
    ['METRICS_PORT', '70000'],
    ['RATE_LIMIT_PER_MINUTE', '0'],
    ['REDIS_URL', 'localhost:6379'],
    ['CORS_ORIGINS', 'app.example.com'],
    ['CORS_ORIGINS', 'https://a.example/path'],
    ['TRUST_PROXY', 'yes please'],
    ['TRUST_PROXY', 'maybe'],
    ['HOST', 'http://localhost'],
    ['DATABASE_URL', 'mysql://db:notaport/plants'],
    ['REDIS_URL', 'redis://cache:notaport'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
    ['SHUTDOWN_DELAY_MS', '-5'],
    ['OIDC_ISSUER', 'http://id.example.com'],
    ['OIDC_ISSUER', 'id.example.com'],
    ['OIDC_ISSUER', 'https://id.example.com/?realm=plants'],
    ['OIDC_ISSUER', 'https://id.example.com/#plants'],
    ['OIDC_OWNER_CLAIM', 'org id'],
    ['OIDC_JWKS_CACHE_MS', '10'],
  ])('refuses %s=%p with a message naming the variable', (name, value) => {
    const error = configError({ [name]: value });
    expect(error.message).toContain(name);
    expect(error.message).toContain(`(got ${JSON.stringify(value)})`);
  });

  it('reads OIDC_ISSUER with its defaults, allowing http on loopback only', () => {
    for (const issuer of [
      'http://127.0.0.1:4000',
      'http://localhost:4000/oidc',
      'http://[::1]:4000',
      'https://id.example.com',
    ]) {
      expect(loadConfig({ OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'plants' }).oidc).toEqual({
        issuer,
        audience: 'plants',
        ownerClaim: byDefault('OIDC_OWNER_CLAIM'),
        jwksCacheMs: byDefault('OIDC_JWKS_CACHE_MS'),
      });
    }
  });

  it('requires OIDC_AUDIENCE with OIDC_ISSUER', () => {
    expect(configError({ OIDC_ISSUER: 'https://id.example.com' }).message).toContain(
      'OIDC_AUDIENCE is required with OIDC_ISSUER',
    );
  });

  it('names every wrong variable at once, each at the start of one line of its own', () => {
    const error = configError({ PORT: 'abc', NODE_ENV: 'staging', PLANTS_MAX_PAGE: '0' });
    expect(error.problems).toEqual([
      expect.stringMatching(/^NODE_ENV must be /),
      expect.stringMatching(/^PORT must be /),
      expect.stringMatching(/^PLANTS_MAX_PAGE must be /),
    ]);
    expect(error.message).toBe(`Invalid configuration:\n${error.problems.map((line) => `  - ${line}`).join('\n')}`);
  });

  it('accepts a Redis Sentinel REDIS_URL', () => {
    const url = 'redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2:26379,10.0.0.3:26379/mymaster/2';
    expect(loadConfig({ REDIS_URL: url }).rateLimit.redisUrl).toBe(url);
  });

  it.each([
    ['redis+sentinel://10.0.0.1:26379,10.0.0.2:26379', 'it does not read as redis+sentinel://'],
    ['redis+sentinel://10.0.0.1:263790/mymaster', 'sentinel address "10.0.0.1:263790"'],
    ['redis+sentinel://10.0.0.1/mymaster?sentinel_password=x', 'parameter "sentinel_password"'],
    ['memcached://cache:11211', 'its scheme is not redis, rediss or redis+sentinel'],
  ])('refuses REDIS_URL=%p, naming the variable, both forms and what is wrong', (url, why) => {
    const { message } = configError({ REDIS_URL: url });
    expect(message).toContain(
      'REDIS_URL must be a URL of the form redis://[:password@]host:6379[/db] (rediss:// for TLS)',
    );
    expect(message).toContain('redis+sentinel://[:password@]host1:26379,host2:26379,host3:26379/mymaster[/db]');
    expect(message).toContain(why);
  });

  it('masks passwords in the value it quotes back', () => {
    const redis = configError({
      REDIS_URL: 'redis+sentinel://:hunter2@h1:26379/mymaster/x?sentinelPassword=swordfish',
    }).message;
    expect(redis).toContain('(got "redis+sentinel://***@h1:26379/mymaster/x?sentinelPassword=***")');
    expect(redis).not.toMatch(/hunter2|swordfish/);
    const database = configError({ DATABASE_URL: 'postgres://app:hunter2@db/plants' }).message;
    expect(database).toContain('(got "postgres://***@db/plants")');
  });

  it('describes the expected DATABASE_URL form', () => {
    expect(configError({ DATABASE_URL: 'sqlite://x' }).message).toContain(
      'DATABASE_URL must be a URL of the form mysql://user:password@host:3306/database',
    );
  });

  describe('webhooks', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    const other = Buffer.alloc(32, 9).toString('base64url');

    it('reads keys, schedule, disable-after and switches', () => {
      const { secrets, webhooks: config } = loadConfig({
        WEBHOOK_SECRET_KEY: `${key}, ${other}`,
        WEBHOOK_RETRY_SCHEDULE: '250ms,2s,1m',
        WEBHOOK_DISABLE_AFTER: '12h',
        WEBHOOK_TIMEOUT_MS: '1500',
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE: 'false',
      });
      expect(secrets.keys).toEqual([Buffer.alloc(32, 7), Buffer.alloc(32, 9)]);
      expect(config.retryScheduleMs).toEqual([250, 2000, 60_000]);
      expect(config.disableAfterMs).toBe(43_200_000);
      expect(config.timeoutMs).toBe(1500);
      expect(config.allowHttp).toBe(true);
      expect(config.allowPrivate).toBe(false);
    });

    it.each([
      ['WEBHOOK_SECRET_KEY', 'short', /WEBHOOK_SECRET_KEY must be one or more comma-separated keys of 32 random bytes/],
      ['WEBHOOK_SECRET_KEY', Buffer.alloc(31).toString('base64'), /WEBHOOK_SECRET_KEY/],
      ['WEBHOOK_RETRY_SCHEDULE', '5s,,5m', /WEBHOOK_RETRY_SCHEDULE must be 1 to 20/],
      ['WEBHOOK_RETRY_SCHEDULE', '8d', /WEBHOOK_RETRY_SCHEDULE/],
      ['WEBHOOK_RETRY_SCHEDULE', '5 minutes', /WEBHOOK_RETRY_SCHEDULE/],
      ['WEBHOOK_DISABLE_AFTER', '5', /WEBHOOK_DISABLE_AFTER must be a duration/],
      ['IDEMPOTENCY_TTL', '24', /IDEMPOTENCY_TTL must be a duration from 1s to 30d/],
      ['IDEMPOTENCY_TTL', '500ms', /IDEMPOTENCY_TTL must be a duration from 1s to 30d/],
      ['IDEMPOTENCY_TTL', '31d', /IDEMPOTENCY_TTL must be a duration from 1s to 30d/],
      ['WEBHOOK_TIMEOUT_MS', '10001', /WEBHOOK_TIMEOUT_MS/],
      ['WEBHOOK_ALLOW_PRIVATE', 'yes', /WEBHOOK_ALLOW_PRIVATE/],
    ])('refuses %s=%p', (name, value, message) => {
      expect(configError({ [name]: value }).message).toMatch(message);
    });

    it('never echoes a refused key in full', () => {
      const bad = `${key.slice(0, 40)}!!!`;
      const message = configError({ WEBHOOK_SECRET_KEY: bad }).message;
      expect(message).toMatch(/WEBHOOK_SECRET_KEY must be/);
      expect(message).not.toContain(key.slice(0, 12));
    });
  });
});

describe(loadLogConfig.name, () => {
  it('reads the log settings as loadConfig does, whatever else is wrong', () => {
    const env = { NODE_ENV: 'production', LOG_LEVEL: 'warn', PORT: 'abc', DATABASE_URL: 'postgres://x' };
    expect(loadLogConfig(env)).toEqual({ level: 'warn', pretty: false });
    expect(loadLogConfig({ LOG_FORMAT: 'json', LOG_LEVEL: 'debug' })).toEqual(
      loadConfig({ LOG_FORMAT: 'json', LOG_LEVEL: 'debug' }).log,
    );
  });

  it('takes a wrong log setting as unset, keeping the others', () => {
    expect(loadLogConfig({ NODE_ENV: 'production', LOG_LEVEL: 'verbose' })).toEqual({
      level: byDefault('LOG_LEVEL'),
      pretty: false,
    });
    expect(loadLogConfig({ NODE_ENV: 'staging', LOG_FORMAT: 'json', LOG_LEVEL: 'error' })).toEqual({
      level: 'error',
      pretty: false,
    });
  });
});
