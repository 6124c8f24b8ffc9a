import { ShutdownState } from './shutdown-state';

describe(ShutdownState.name, () => {
  it('starts serving, and turns to shutting down on begin() or before the application shuts down', () => {
    const direct = new ShutdownState();
    expect(direct.isShuttingDown).toBe(false);
    direct.begin();
    expect(direct.isShuttingDown).toBe(true);

    const hooked = new ShutdownState();
    hooked.beforeApplicationShutdown();
    expect(hooked.isShuttingDown).toBe(true);
  });
});
