import { startupRetryDelayMs } from '../../src/database/startup-retry';
import { attemptLeaseMs } from '../../src/webhooks/deliveries/webhook-attempt';
import { doublingWaits, linearFormula, nodeLines } from './constant-facts';

describe(linearFormula.name, () => {
  it("writes a function linear in a setting as the code computes it: the lease's", () => {
    expect(linearFormula((timeoutMs) => attemptLeaseMs({ timeoutMs }), 'WEBHOOK_TIMEOUT_MS')).toBe(
      '2 × `WEBHOOK_TIMEOUT_MS` + 5 seconds',
    );
    expect(linearFormula((ms) => ms + 2000, 'SHUTDOWN_TIMEOUT_MS')).toBe('`SHUTDOWN_TIMEOUT_MS` + 2 seconds');
  });

  it('refuses a function that is not linear, rather than state a formula it does not compute', () => {
    expect(() => linearFormula((ms) => Math.min(2 * ms, 30_000) + 5000, 'WEBHOOK_TIMEOUT_MS')).toThrow(
      'not a × WEBHOOK_TIMEOUT_MS + b',
    );
  });
});

describe(doublingWaits.name, () => {
  it("writes the waits of a doubling retry up to its cap: the start-up's", () => {
    expect(doublingWaits(startupRetryDelayMs)).toBe('0.5 s, then 1, 2, 4 and every 5 s');
    expect(doublingWaits((attempt) => Math.min(100 * 2 ** (attempt - 1), 300))).toBe('0.1 s, then 0.2 and every 0.3 s');
  });
});

describe(nodeLines.name, () => {
  it('writes the lines `engines` admits, a line from its first release by its number alone', () => {
    expect(nodeLines('^22.15.0 || ^24.11.0 || ^26.0.0')).toBe('22.15+, 24.11+ or 26');
    expect(nodeLines('>=22.12.0')).toBe('22.12+');
    expect(nodeLines('^24.11.1')).toBe('24.11.1+');
  });

  it('refuses a range it cannot say in words', () => {
    expect(() => nodeLines('^22.15.0 || 24.x')).toThrow('"24.x" is not ^x.y.z or >=x.y.z');
  });
});
