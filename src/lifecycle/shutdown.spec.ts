import { INestApplication } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createServer } from 'node:http';
import { LogOutput } from '../logging/log-output';
import { EXIT_FORCED, EXIT_MARGIN_MS, exitGracefullyOnSignals } from './shutdown';
import { ShutdownState } from './shutdown-state';

describe(exitGracefullyOnSignals.name, () => {
  const added: Array<[NodeJS.Signals, (...args: unknown[]) => void]> = [];
  afterEach(() => {
    for (const [signal, listener] of added.splice(0)) process.removeListener(signal, listener);
    jest.restoreAllMocks();
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

    const before = new Set(process.listeners('SIGTERM'));
    exitGracefullyOnSignals(app);
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      for (const listener of process.listeners(signal))
        if (!before.has(listener)) added.push([signal, listener as () => void]);
    }
    const exited = new Promise<number>((resolve) => {
      jest.spyOn(process, 'exit').mockImplementation(((code: number) => resolve(code)) as never);
    });
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
