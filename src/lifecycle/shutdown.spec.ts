import { INestApplication, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createServer } from 'node:http';
import { LogOutput } from '../logging/log-output';
import { EXIT_FORCED, EXIT_MARGIN_MS, EXIT_NOT_STARTED, exitOnSignals } from './shutdown';
import { ShutdownState } from './shutdown-state';

describe(exitOnSignals.name, () => {
  const added: Array<[NodeJS.Signals, (...args: unknown[]) => void]> = [];
  afterEach(() => {
    for (const [signal, listener] of added.splice(0)) process.removeListener(signal, listener);
    jest.restoreAllMocks();
  });

  /** Installs the handlers, to be removed after the test; gives the code the process would exit with. */
  function handleSignals(logOutput: Partial<LogOutput>): {
    signals: ReturnType<typeof exitOnSignals>;
    exited: Promise<number>;
  } {
    const before = new Set([...process.listeners('SIGTERM'), ...process.listeners('SIGINT')]);
    const signals = exitOnSignals(logOutput as LogOutput);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      for (const listener of process.listeners(signal))
        if (!before.has(listener)) added.push([signal, listener as () => void]);
    }
    const exited = new Promise<number>((resolve) => {
      jest.spyOn(process, 'exit').mockImplementation(((code: number) => resolve(code)) as never);
    });
    return { signals, exited };
  }

  it('stops at once while the instance is starting, saying so, once its lines are written', async () => {
    const log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    let written = false;
    const logOutput = {
      close: jest.fn(async () => {
        written = true;
      }),
      abandon: jest.fn(),
    };
    const { exited } = handleSignals(logOutput);
    const signalledAt = Date.now();
    process.emit('SIGTERM');

    await expect(exited).resolves.toBe(EXIT_NOT_STARTED);
    expect(Date.now() - signalledAt).toBeLessThan(1000);
    expect(log).toHaveBeenCalledWith('SIGTERM while starting: stopping before serving');
    expect(written).toBe(true);
    expect(logOutput.abandon).not.toHaveBeenCalled();
  });

  it('exits with EXIT_FORCED by delay + timeout + margin when a module never finishes closing', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const logOutput = { close: jest.fn(async () => undefined), abandon: jest.fn() };
    const providers = new Map<unknown, unknown>([
      [ConfigService, { get: () => ({ delayMs: 0, timeoutMs: 100 }) }],
      [ShutdownState, new ShutdownState()],
      [LogOutput, logOutput],
    ]);
    const app = {
      get: (token: unknown) => providers.get(token),
      getHttpServer: () => server,
      close: () => new Promise<void>(() => undefined),
    } as unknown as INestApplication;

    const { signals, exited } = handleSignals(logOutput);
    signals.serving(app);
    const signalledAt = Date.now();
    process.emit('SIGTERM');

    await expect(exited).resolves.toBe(EXIT_FORCED);
    const elapsed = Date.now() - signalledAt;
    expect(elapsed).toBeGreaterThanOrEqual(100 + EXIT_MARGIN_MS - 20);
    expect(elapsed).toBeLessThan(100 + EXIT_MARGIN_MS + 1000);
    // Whatever stdout is doing, nothing left buffered is waited for at exit.
    expect(logOutput.abandon).toHaveBeenCalled();
    expect(logOutput.close).not.toHaveBeenCalled();
  }, 10_000);
});
