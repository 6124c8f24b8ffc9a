import { ChildProcess, spawn } from 'node:child_process';
import { AddressInfo, createServer } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { levels } from 'pino';
import { listeningMessage, listeningUrl } from '../../src/app.setup';
import { CliContextFactory, CliModule, runCli } from '../../src/cli';
import { ENVIRONMENT } from '../../src/config/config.module';
import { loadLogConfig } from '../../src/config/configuration';
import { builtModule } from './service-build';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  /** The environment the process was given, the defaults above included. */
  env: Record<string, string>;
  /** Everything the process wrote to stdout and stderr so far. */
  output: () => string;
  /** The JSON log lines so far (other lines skipped). */
  logLines: () => Record<string, unknown>[];
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** Sends a signal and waits for the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/**
 * The service as operators run it: its own process, `src/main.ts` compiled (the run's build,
 * test/utils/service-build.ts) with its signal handling and its JSON logs on stdout, configured
 * only through the environment. It runs in an empty working directory, so a developer's `.env` in
 * the project cannot reach it. `build`, the folder of a built tree, runs that tree's `dist/main.js`
 * instead (another release, for example). Resolves once it listens on its port.
 *
 * The port is one freePort() found free, which another process may take before this one listens
 * (the suites of two Node.js lines run side by side, each starting services): a start that fails
 * with EADDRINUSE is made again on another port.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  timeoutMs = 60_000,
  build?: string,
): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    const service = await spawnServiceProcess(env, build);
    try {
      await untilListening(service, timeoutMs);
      return service;
    } catch (error) {
      if (attempt < 3 && service.output().includes('EADDRINUSE')) continue;
      throw error;
    }
  }
}

/**
 * Until the process listens: its own line saying so (listeningMessage) names its port, where a
 * liveness answer could come from another process that holds the port; with a log too quiet
 * (LOG_LEVEL) to say so, until liveness answers.
 */
async function untilListening(service: ServiceProcess, timeoutMs: number): Promise<void> {
  const { child, url } = service;
  // The line is logged at info: read the level as the service reads it.
  const saysSo = levels.values[loadLogConfig(service.env).level] <= levels.values.info;
  // The URL in that line is the one the service names from its HOST, which a test may set.
  const line = listeningMessage(listeningUrl(service.env.HOST, Number(new URL(url).port)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`The service exited with code ${child.exitCode}; its output:\n${service.output()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The service did not start within ${timeoutMs} ms; its output:\n${service.output()}`);
    }
    const up = saysSo
      ? service.output().includes(line)
      : await fetch(`${url}/health/live`).then(
          (res) => res.ok,
          () => false,
        );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A webhook worker (`plantstore worker`) as operators run it, configured like the service; resolves
 * once it says it is delivering. Its `url` leads nowhere: a worker serves no API.
 */
export async function startWorkerProcess(env: Record<string, string>, timeoutMs = 60_000): Promise<ServiceProcess> {
  const worker = await spawnServiceProcess(env, undefined, ['cli', 'worker']);
  const deadline = Date.now() + timeoutMs;
  while (!worker.output().includes('Delivering webhook events')) {
    if (worker.child.exitCode !== null)
      throw new Error(`The worker exited with code ${worker.child.exitCode}; its output:\n${worker.output()}`);
    if (Date.now() > deadline) {
      worker.child.kill('SIGKILL');
      throw new Error(`The worker did not start within ${timeoutMs} ms; its output:\n${worker.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return worker;
}

/**
 * The service's process as startServiceProcess starts it, without waiting for it to be up;
 * `command`: another entry point of src/ (or of `build`'s dist/) and its arguments.
 */
export async function spawnServiceProcess(
  env: Record<string, string>,
  build?: string,
  [entry, ...args]: string[] = ['main'],
): Promise<ServiceProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const environment = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
    ...env,
    PORT: String(port),
  };
  const child = spawn(process.execPath, [build ? join(build, 'dist', `${entry}.js`) : builtModule(entry), ...args], {
    cwd: mkdtempSync(join(tmpdir(), 'plant-store-service-')),
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  // 'close' rather than 'exit': by then stdout and stderr are drained, so output() is complete.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));

  return {
    child,
    url,
    env: environment,
    output: () => text,
    logLines: () =>
      text
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as Record<string, unknown>];
          } catch {
            return [];
          }
        }),
    exited,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * The admin CLI's context on the database that `env` points at, configured by `env` alone (no
 * `process.env`, no `.env`): pass it to `runCli`.
 */
export function cliContext(env: Record<string, string>): CliContextFactory {
  return async () => {
    const moduleRef = await Test.createTestingModule({ imports: [CliModule] })
      .overrideProvider(ENVIRONMENT)
      .useValue({ NODE_ENV: 'test', LOG_LEVEL: 'silent', ...env })
      .compile();
    moduleRef.useLogger(['error', 'warn']);
    return moduleRef.init();
  };
}

/** Issues a token in the database that `env` points at, through the admin CLI. */
export async function createTokenWithCli(env: Record<string, string>, subject: string): Promise<string> {
  const out: string[] = [];
  const io = { out: (l: string) => out.push(...l.split('\n')), err: () => undefined };
  const code = await runCli(['token', 'create', '--user', subject], io, cliContext(env));
  if (code !== 0) throw new Error(`token create exited with ${code}`);
  return out[out.length - 1];
}

/** A TCP port free on 127.0.0.1 at the moment of asking. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The service's stdout as a log reader in a pipe sees it: it can stop reading (the pipe fills, as
 * with `node dist/main.js | sleep 30`), read again, or go away (the service's writes fail with EPIPE).
 */
export function stdoutReader(service: ServiceProcess): { stall: () => void; resume: () => void; close: () => void } {
  const stdout = service.child.stdout!;
  return {
    stall: () => stdout.pause(),
    resume: () => stdout.resume(),
    close: () => stdout.destroy(),
  };
}
