import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { mysqlConnection, testDatabases } from './utils/databases';
import { AppConfig, CONFIG_VARIABLES, loadConfig } from '../src/config/configuration';
import { statedFacts } from '../scripts/docs/fragments';

const CONFIGURATION_DOC = 'docs/configuration.md';

/**
 * The container files and the configuration docs, checked against the service's own configuration
 * (CONFIG_VARIABLES, loadConfig), so a variable added to or renamed in the service cannot leave them behind.
 */

const read = (file: string): string => readFileSync(join(__dirname, '..', file), 'utf8');

// ---- docker-compose.yml ----

type EnvValue = string | number | boolean | null;
type PortEntry = string | number | { target: number | string; published?: number | string; host_ip?: string };

interface ComposeService {
  profiles?: string[];
  build?: string;
  network_mode?: string;
  volumes?: string[];
  image?: string;
  command?: string | string[];
  environment?: Record<string, EnvValue> | string[];
  ports?: PortEntry[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  stop_grace_period?: string;
}

interface PublishedPort {
  hostIp?: string;
  published?: string;
  target: number;
}

/** As Compose hands it to the container: list or map form, every value a string. */
function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const at = entry.indexOf('=');
        return at < 0 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value === null ? '' : String(value)]));
}

/** Short syntax `[[host_ip:]published:]target[/protocol]`, or the long syntax's object. */
function parsePort(entry: PortEntry): PublishedPort {
  if (typeof entry === 'object') {
    return {
      hostIp: entry.host_ip,
      published: entry.published === undefined ? undefined : String(entry.published),
      target: Number(entry.target),
    };
  }
  const spec = String(entry).replace(/\/\w+$/, '');
  const match = /^(?:(?:(\[[^\]]+\]|[^:]+):)?([^:]*):)?([^:]+)$/.exec(spec);
  if (!match) throw new Error(`unreadable port mapping ${JSON.stringify(entry)}`);
  const [, hostIp, published, target] = match;
  return { hostIp: hostIp?.replace(/^\[|\]$/g, ''), published: published || undefined, target: Number(target) };
}

function healthcheckOf(service: ComposeService): string {
  const check = service.healthcheck;
  if (!check || check.disable || check.test === undefined) return '';
  const test = Array.isArray(check.test) ? check.test : [check.test];
  return test[0] === 'NONE' ? '' : test.join(' ');
}

/** A Compose duration such as `15s` or `1m30s`, in milliseconds. */
function durationMs(duration: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, ns: 0.000001 };
  const parts = [...duration.matchAll(/(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== duration) {
    throw new Error(`unreadable duration ${JSON.stringify(duration)}`);
  }
  return parts.reduce((total, [, amount, unit]) => total + Number(amount) * units[unit], 0);
}

describe('docker-compose.yml', () => {
  const services = (parse(read('docker-compose.yml')) as { services: Record<string, ComposeService> }).services;
  const { mariadb, app } = services;
  const appEnv = environmentOf(app);
  let config: AppConfig;

  beforeAll(() => {
    config = loadConfig(appEnv);
  });

  it('has the mariadb, redis and app services', () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['mariadb', 'redis', 'app']));
  });

  it('sets on app only variables the service reads, with values it accepts, for production', () => {
    // Besides OpenTelemetry's own, read by its SDK (docs/configuration.md, "Traces").
    expect(Object.keys(appEnv).filter((name) => !CONFIG_VARIABLES.includes(name) && !name.startsWith('OTEL_'))).toEqual(
      [],
    );
    expect(() => loadConfig(appEnv)).not.toThrow();
    expect(loadConfig(appEnv).env).toBe('production');
  });

  it('points DATABASE_URL at the mariadb service, its database and its credentials', () => {
    expect(config.database.type).toBe('mariadb');
    const url = new URL(config.database.type === 'sqlite' ? '' : config.database.url);
    const mariadbEnv = environmentOf(mariadb);
    expect({
      host: url.hostname,
      port: url.port || '3306',
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: decodeURIComponent(url.pathname.slice(1)),
    }).toEqual({
      host: 'mariadb',
      port: '3306',
      user: mariadbEnv.MARIADB_USER,
      password: mariadbEnv.MARIADB_PASSWORD,
      database: mariadbEnv.MARIADB_DATABASE,
    });
  });

  it('points REDIS_URL at the redis service', () => {
    const url = new URL(config.rateLimit.redisUrl ?? '');
    expect({ protocol: url.protocol, host: url.hostname, port: url.port || '6379' }).toEqual({
      protocol: 'redis:',
      host: 'redis',
      port: '6379',
    });
  });

  it('runs MariaDB with utf8mb4 as the server character set, on the line of the cluster profile', () => {
    expect(mariadb.image).toMatch(/^mariadb:\d+\.\d+$/);
    expect([mariadb.command ?? []].flat().join(' ')).toContain('--character-set-server=utf8mb4');
    for (const node of ['galera1', 'galera2', 'galera3']) expect(services[node].image).toBe(mariadb.image);
  });

  // The database the compose file ships is the one the suite runs on: CI's MySQL e2e server.
  (testDatabases().includes('mysql') ? it : it.skip)(
    'ships the server line the suite is tested on (TEST_DATABASE_URL)',
    async () => {
      const connection = await mysqlConnection(process.env.TEST_DATABASE_URL as string, '');
      try {
        const [[{ version }]] = (await connection.query('SELECT VERSION() AS version')) as unknown as [
          [{ version: string }],
        ];
        const [, line] = /^mariadb:(\d+\.\d+)$/.exec(mariadb.image ?? '') ?? [];
        expect(version).toMatch(/MariaDB/);
        expect(version.startsWith(`${line}.`)).toBe(true);
      } finally {
        await connection.end();
      }
    },
  );

  it.each([
    ['mariadb', 'healthcheck.sh --connect --innodb_initialized'],
    ['redis', 'redis-cli ping'],
    ['app', '/health/ready'],
  ])('gives %s a healthcheck (%s)', (name, probe) => {
    expect(healthcheckOf(services[name])).toContain(probe);
  });

  it('starts app once mariadb and redis are healthy', () => {
    expect(app.depends_on).toMatchObject({
      mariadb: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
  });

  it('publishes the API on PORT, and metrics on METRICS_PORT for this host only', () => {
    const ports = (app.ports ?? []).map(parsePort);
    expect(ports.map((port) => port.target)).toContain(config.port);
    for (const port of ports) expect([config.port, config.metrics.port]).toContain(port.target);
    for (const port of ports.filter((p) => p.target === config.metrics.port)) expect(port.hostIp).toBe('127.0.0.1');
  });

  it('lets a graceful shutdown (SHUTDOWN_DELAY_MS, then SHUTDOWN_TIMEOUT_MS) end before Docker kills the container', () => {
    // Compose's default grace period is 10s.
    expect(durationMs(app.stop_grace_period ?? '10s')).toBeGreaterThan(
      config.shutdown.delayMs + config.shutdown.timeoutMs,
    );
  });

  describe('the cluster profile (docs/scaling.md)', () => {
    const nodes = ['galera1', 'galera2', 'galera3'];
    const commandOf = (name: string) => [services[name].command ?? []].flat().map(String);
    const option = (name: string, key: string) =>
      commandOf(name)
        .find((arg) => arg.startsWith(`${key}=`))
        ?.slice(key.length + 1);

    it('adds three Galera nodes, their health agents and HAProxy only under `--profile cluster`; a plain `up` is unchanged', () => {
      for (const name of [...nodes, ...nodes.map((n) => `${n}-check`), 'haproxy'])
        expect(services[name]?.profiles).toEqual(['cluster']);
      for (const name of ['mariadb', 'redis', 'app']) expect(services[name].profiles).toBeUndefined();
    });

    it('forms one cluster of the three nodes, bootstrapped by galera1 alone', () => {
      for (const name of nodes) {
        expect(option(name, '--wsrep-on')).toBe('ON');
        expect(option(name, '--wsrep-cluster-address')).toBe('gcomm://galera1,galera2,galera3');
        expect(option(name, '--wsrep-cluster-name')).toBe('plant-store');
        expect(option(name, '--binlog-format')).toBe('ROW');
        expect(healthcheckOf(services[name])).toContain('--galera_online');
        expect(commandOf(name).includes('--wsrep-new-cluster')).toBe(name === 'galera1');
      }
    });

    it('has joiners take their state transfer from a backup first, so the writer is not made a donor', () => {
      for (const name of nodes) {
        const donors = option(name, '--wsrep-sst-donor')?.split(',') ?? [];
        // A trailing empty entry: any node when none of those listed can serve.
        expect(donors[donors.length - 1]).toBe('');
        expect(donors.slice(0, -1).length).toBeGreaterThan(0);
        expect(donors).not.toContain('galera1');
        expect(donors).not.toContain(name);
      }
    });

    it("runs each node's health agent (deploy/clustercheck) in the node's network namespace, on port 9200", () => {
      for (const name of nodes) {
        const check = services[`${name}-check`];
        expect(check.build).toBe('./deploy/clustercheck');
        expect(check.network_mode).toBe(`service:${name}`);
      }
      const [agent] = dockerfileStages(read('deploy/clustercheck/Dockerfile'));
      expect(agent.find((i) => i.keyword === 'COPY')?.args).toMatch(
        /clustercheck\.sh \/usr\/local\/bin\/clustercheck$/,
      );
      expect(agent.find((i) => i.keyword === 'CMD')?.args).toBe(
        '["socat", "TCP-LISTEN:9200,reuseaddr,fork", "EXEC:/usr/local/bin/clustercheck"]',
      );
      expect(read('deploy/galera-init.sql')).toContain("CREATE USER IF NOT EXISTS 'clustercheck'@'%'");
    });

    it('runs HAProxy with deploy/haproxy.cfg, whose servers are the three nodes routed by their agents, published on this host only', () => {
      const { haproxy } = services;
      expect(haproxy.volumes).toContain('./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
      const cfg = read('deploy/haproxy.cfg');
      const servers = [...cfg.matchAll(/^\s*server (\S+) (\S+):3306 check port 9200( backup)?$/gm)].map(
        ([, name, host, backup]) => ({ name, host, backup: !!backup }),
      );
      expect(servers).toEqual([
        { name: 'galera1', host: 'galera1', backup: false },
        { name: 'galera2', host: 'galera2', backup: true },
        { name: 'galera3', host: 'galera3', backup: true },
      ]);
      expect(cfg).toMatch(/^\s*option httpchk$/m);
      expect(cfg).toMatch(/^\s*http-check expect status 200$/m);
      expect(cfg).toMatch(/^\s*default-server .*on-marked-down shutdown-sessions/m);
      expect(cfg).not.toMatch(/mysql-check/);
      expect((haproxy.ports ?? []).map(parsePort)).toEqual([{ hostIp: '127.0.0.1', published: '3307', target: 3306 }]);
      expect(haproxy.depends_on).toMatchObject({
        ...Object.fromEntries(nodes.map((n) => [n, { condition: 'service_healthy' }])),
        ...Object.fromEntries(nodes.map((n) => [`${n}-check`, { condition: 'service_started' }])),
      });
    });
  });

  describe('the observability profile (docs/operations.md, "Monitoring")', () => {
    const { prometheus, grafana, jaeger } = services;
    const mounts = (service: ComposeService) =>
      Object.fromEntries((service.volumes ?? []).map((volume) => volume.split(':')).map(([from, to]) => [to, from]));

    it('adds Prometheus, Grafana and Jaeger only under `--profile observability`, each on this host only', () => {
      for (const service of [prometheus, grafana, jaeger]) {
        expect(service.profiles).toEqual(['observability']);
        for (const port of (service.ports ?? []).map(parsePort)) expect(port.hostIp).toBe('127.0.0.1');
      }
    });

    it("runs Prometheus on deploy/observability/prometheus, scraping app's and the workers' METRICS_PORT under the jobs the rules name", () => {
      expect(mounts(prometheus)['/etc/prometheus']).toBe('./deploy/observability/prometheus');
      const config = parse(read('deploy/observability/prometheus/prometheus.yml')) as {
        rule_files: string[];
        scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; port: number }[] }[];
      };
      const scraped = Object.fromEntries(
        config.scrape_configs.map((job) => [job.job_name, job.dns_sd_configs.map((sd) => [sd.names, sd.port])]),
      );
      const workerPort = loadConfig(environmentOf(services.worker)).metrics.port;
      expect(scraped).toEqual({
        'plant-store': [[['app'], loadConfig(appEnv).metrics.port]],
        'plant-store-worker': [[['worker'], workerPort]],
      });
      expect(read('deploy/observability/prometheus/plant-store.rules.yml')).toMatch(/plant-store\|plant-store-worker/);
      for (const file of config.rule_files) expect(() => read(`deploy/observability/prometheus/${file}`)).not.toThrow();
    });

    it('provisions Grafana with the Prometheus and Jaeger services and the dashboards folder', () => {
      expect(mounts(grafana)).toMatchObject({
        '/etc/grafana/provisioning': './deploy/observability/grafana/provisioning',
        '/var/lib/grafana/dashboards': './deploy/observability/grafana/dashboards',
      });
      const { datasources } = parse(read('deploy/observability/grafana/provisioning/datasources/datasources.yml')) as {
        datasources: { type: string; url: string }[];
      };
      expect(datasources.map(({ type, url }) => [type, new URL(url).hostname])).toEqual([
        ['prometheus', 'prometheus'],
        ['jaeger', 'jaeger'],
      ]);
      const { providers } = parse(read('deploy/observability/grafana/provisioning/dashboards/dashboards.yml')) as {
        providers: { options: { path: string } }[];
      };
      expect(providers.map((provider) => provider.options.path)).toEqual(['/var/lib/grafana/dashboards']);
    });

    it("sends app's traces over OTLP/HTTP to the Jaeger service unless OTEL_EXPORTER_OTLP_ENDPOINT is set", () => {
      expect(appEnv.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('${OTEL_EXPORTER_OTLP_ENDPOINT-http://jaeger:4318}');
      expect(environmentOf(jaeger).COLLECTOR_OTLP_ENABLED).toBe('true');
    });
  });
});

// ---- Dockerfile ----

interface Instruction {
  keyword: string;
  args: string;
}

/** The instructions of each build stage, with continuation lines joined and comments dropped. */
function dockerfileStages(text: string): Instruction[][] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(#|$)/.test(line)) continue;
    const continued = /\\\s*$/.test(line);
    pending += `${line.replace(/\\\s*$/, '')} `;
    if (continued) continue;
    const [, keyword, args] = /^\s*(\S+)\s*(.*?)\s*$/.exec(pending) ?? [];
    instructions.push({ keyword: keyword.toUpperCase(), args });
    pending = '';
  }
  const stages: Instruction[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

/** `ENV A=1 B="two"` and the older `ENV A 1`. */
function envOf(stage: Instruction[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.filter((instruction) => instruction.keyword === 'ENV')) {
    if (/^[\w.-]+=/.test(args)) {
      for (const [, name, value] of args.matchAll(/([\w.-]+)=("[^"]*"|'[^']*'|\S*)/g)) {
        env[name] = value.replace(/^(["'])(.*)\1$/, '$2');
      }
    } else {
      const [name, ...rest] = args.split(/\s+/);
      env[name] = rest.join(' ');
    }
  }
  return env;
}

describe('Dockerfile', () => {
  const stages = dockerfileStages(read('Dockerfile'));
  const final = stages.at(-1) ?? [];
  const argsOf = (stage: Instruction[], keyword: string): string[] =>
    stage.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args);
  const finalConfig = (): AppConfig => loadConfig(envOf(final));

  it('builds in more than one stage, each on the Node.js LTS line that CI tests the image with', () => {
    const ciLine = /^IMAGE_LINE=(\d+)$/m.exec(read('.ci/run'))?.[1];
    expect(ciLine).toBe('26');
    expect(stages.length).toBeGreaterThan(1);
    for (const stage of stages) expect(argsOf(stage, 'FROM')[0]).toMatch(new RegExp(`^node:${ciLine}-slim(\\s|$)`));
  });

  it('runs the final stage as a user other than root, with NODE_ENV=production', () => {
    const user = argsOf(final, 'USER').at(-1) ?? 'root';
    expect(['root', '0']).not.toContain(user.split(':')[0]);
    expect(finalConfig().env).toBe('production');
  });

  it('probes /health/live on PORT with node itself (the slim image has no curl)', () => {
    const healthcheck = argsOf(final, 'HEALTHCHECK').at(-1) ?? '';
    expect(healthcheck).toContain('/health/live');
    expect(healthcheck).toContain('process.env.PORT');
    expect(healthcheck).toMatch(/\bnode\b/);
    expect(healthcheck).not.toMatch(/\b(curl|wget)\b/);
  });

  it('drops dev dependencies before they reach the runtime stage', () => {
    const runs = stages.flatMap((stage) => argsOf(stage, 'RUN'));
    expect(runs.some((run) => /\bnpm (prune|ci)\b[^&;|]*--omit=dev\b/.test(run))).toBe(true);
  });

  it('starts the service with the command of npm run start:prod', () => {
    const startProd = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts['start:prod'];
    const cmd = JSON.parse(argsOf(final, 'CMD').at(-1) ?? '[]') as string[];
    expect(cmd).toEqual(startProd.split(/\s+/));
    expect(cmd).toContain('--no-allocation-site-pretenuring');
    expect(cmd).toContain('--max-old-space-size=512');
  });

  it('has the tool the migrations change a large table with on a Galera cluster', () => {
    const runs = argsOf(final, 'RUN');
    expect(runs.some((run) => /\bapt-get install\b[^&;|]*\bpercona-toolkit\b/.test(run))).toBe(true);
  });

  it('exposes the API port and the metrics port', () => {
    const exposed = argsOf(final, 'EXPOSE').flatMap((args) =>
      args.split(/\s+/).map((port) => Number(port.replace(/\/\w+$/, ''))),
    );
    const { port, metrics } = finalConfig();
    expect(exposed).toEqual(expect.arrayContaining([port, metrics.port]));
  });
});

// ---- docs/configuration.md and .env.example ----

describe('configuration documentation', () => {
  const documentedVariables = (): string[] => {
    const table = statedFacts(read(CONFIGURATION_DOC)).find(({ name }) => name === 'settings')?.text ?? '';
    return [...table.matchAll(/^\|\s*`([A-Za-z_][A-Za-z0-9_]*)`\s*\|/gm)].map((match) => match[1]);
  };
  const envExample = (): [string, string][] =>
    [...read('.env.example').matchAll(/^#?\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/gm)].map((match) => [
      match[1],
      match[2].trim(),
    ]);
  const sorted = (names: readonly string[]): string[] => [...names].sort();

  it('reads variables at all (NODE_ENV among them)', () => {
    expect(CONFIG_VARIABLES).toContain('NODE_ENV');
  });

  it(`lists exactly the variables the service reads in ${CONFIGURATION_DOC}'s settings table`, () => {
    expect(sorted(documentedVariables())).toEqual(sorted(CONFIG_VARIABLES));
  });

  it(`mentions exactly those variables in .env.example, in the order of ${CONFIGURATION_DOC}'s table`, () => {
    const names = envExample().map(([name]) => name);
    expect(sorted(names)).toEqual(sorted(CONFIG_VARIABLES));
    expect(names).toEqual(documentedVariables());
  });

  it('gives example values in .env.example that the service accepts', () => {
    expect(() => loadConfig(Object.fromEntries(envExample()))).not.toThrow();
  });
});
