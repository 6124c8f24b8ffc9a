import { prepareDatabase } from './utils/databases';
import { ServiceProcess, createTokenWithCli, startServiceProcess, stdoutReader } from './utils/service-process';

const SHUTDOWN_TIMEOUT_MS = 1000;
/** src/lifecycle/shutdown.ts's EXIT_MARGIN_MS, plus room for a loaded test machine. */
const EXIT_BOUND_MS = SHUTDOWN_TIMEOUT_MS + 2000 + 1500;

/**
 * The log's reader as it fails in production: a shipper that stops reading stdout, or exits. The
 * service keeps serving, counts the lines it could not write, and still exits on SIGTERM in time.
 */
describe('A stalled or gone log reader', () => {
  let env: Record<string, string>;
  let token: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    env = {
      ...(await prepareDatabase('sqlite')).env,
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      RATE_LIMIT_PER_MINUTE: '1000000',
    };
    token = await createTokenWithCli(env, 'log-reader-stalled');
  }, 60_000);

  afterEach(async () => {
    if (service && service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    await service?.exited;
    service = undefined;
  });

  async function metricsPort(s: ServiceProcess): Promise<number> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const port = /Prometheus metrics on port (\d+)/.exec(s.output())?.[1];
      if (port) return Number(port);
      if (Date.now() > deadline) throw new Error(`No metrics port in the output:\n${s.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async function droppedLines(port: number): Promise<number> {
    const { text } = await get(`http://127.0.0.1:${port}/metrics`);
    return Number(/^log_lines_dropped_total (\d+)/m.exec(text)?.[1] ?? NaN);
  }

  /**
   * A GET, sent again once when the pooled connection it went out on turned out closed: the server
   * ends idle keep-alive connections after 5 s, and on a loaded machine the client may reuse one
   * just as it does, before any answer: undici's "other side closed" when the close arrived first,
   * a reset (`ECONNRESET`) when the request did. Browsers retry such a GET too. A service that
   * stopped serving fails the second try as well. Every GET of this spec goes through it: the API's
   * and the metrics' listeners alike sit idle while a flood's batch is answered.
   */
  async function get(url: string): Promise<{ status: number; text: string }> {
    const send = async () => {
      const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      return { status: res.status, text: await res.text() };
    };
    try {
      return await send();
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (code !== 'UND_ERR_SOCKET' && code !== 'ECONNRESET') throw error;
      return send();
    }
  }

  /** Sends logged requests (each line carries a 200-character path) until the service drops lines. */
  async function floodUntilDropping(s: ServiceProcess, port: number): Promise<number> {
    const path = `/plants/${'7'.repeat(18)}/${'x'.repeat(200)}`;
    const deadline = Date.now() + 60_000;
    let sent = 0;
    while (Date.now() < deadline && sent < 40_000) {
      await Promise.all(Array.from({ length: 500 }, () => get(`${s.url}${path}`)));
      sent += 500;
      const dropped = await droppedLines(port);
      if (dropped > 0) return dropped;
    }
    throw new Error(`No line was dropped after ${sent} requests`);
  }

  async function exitTime(s: ServiceProcess): Promise<{ code: number | null; ms: number }> {
    const signalledAt = Date.now();
    s.child.kill('SIGTERM');
    const code = await Promise.race([
      s.exited,
      new Promise<'running'>((r) => setTimeout(() => r('running'), EXIT_BOUND_MS * 2).unref()),
    ]);
    if (code === 'running') throw new Error(`Still running ${EXIT_BOUND_MS * 2} ms after SIGTERM`);
    return { code, ms: Date.now() - signalledAt };
  }

  it('keeps serving when the reader stops reading, counts dropped lines, and exits on SIGTERM in time', async () => {
    service = await startServiceProcess(env);
    const port = await metricsPort(service);
    expect(await droppedLines(port)).toBe(0);
    stdoutReader(service).stall();

    expect(await floodUntilDropping(service, port)).toBeGreaterThan(0);
    expect((await get(`${service.url}/plants`)).status).toBe(200);

    const { code, ms } = await exitTime(service);
    expect(code).not.toBeNull();
    expect(ms).toBeLessThan(EXIT_BOUND_MS);
  }, 120_000);

  it('exits on SIGTERM in time when the reader stalled and then went away', async () => {
    service = await startServiceProcess(env);
    const port = await metricsPort(service);
    const reader = stdoutReader(service);
    reader.stall();
    await floodUntilDropping(service, port);
    reader.close();
    expect((await get(`${service.url}/health/live`)).status).toBe(200);

    const { code, ms } = await exitTime(service);
    expect(code).not.toBeNull();
    expect(ms).toBeLessThan(EXIT_BOUND_MS);
  }, 120_000);

  it('exits on SIGTERM in time, with its exit code, when the reader is gone', async () => {
    service = await startServiceProcess(env);
    stdoutReader(service).close();
    for (let i = 0; i < 200; i++) {
      expect((await get(`${service.url}/plants`)).status).toBe(200);
    }
    const { code, ms } = await exitTime(service);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(EXIT_BOUND_MS);
  }, 120_000);

  it('says how many lines were dropped once the reader reads again', async () => {
    service = await startServiceProcess(env);
    const port = await metricsPort(service);
    const reader = stdoutReader(service);
    reader.stall();
    await floodUntilDropping(service, port);
    reader.resume();

    const s = service;
    const warning = async () =>
      s.logLines().find((line) => String(line.msg).startsWith('Log output could not keep up'));
    const deadline = Date.now() + 20_000;
    while (!(await warning()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await warning()).toMatchObject({
      level: 'warn',
      droppedLines: expect.any(Number),
      since: expect.any(String),
    });
    expect(((await warning())!.droppedLines as number) > 0).toBe(true);
  }, 120_000);
});
