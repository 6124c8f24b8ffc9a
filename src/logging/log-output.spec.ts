import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { LOG_BUFFER_BYTES, LOG_FLUSH_BYTES, LOG_FLUSH_INTERVAL_MS, LogOutput } from './log-output';

const ROOT = join(__dirname, '..', '..');

/** Long enough for waiting lines to be handed over. */
const handedOver = () => sleep(LOG_FLUSH_INTERVAL_MS * 3);

const config = { level: 'info', pretty: false } as const;

/** A stdout stand-in: keeps each write, and can stop taking them (a reader that stalls) and go on. */
class Reader extends Writable {
  readonly writes: string[] = [];
  private held: Array<() => void> = [];
  stalled = false;

  constructor() {
    super({ decodeStrings: false });
  }

  override _write(chunk: string, _encoding: BufferEncoding, done: () => void): void {
    this.writes.push(chunk);
    if (this.stalled) this.held.push(done);
    else done();
  }

  resume(): void {
    this.stalled = false;
    this.held.splice(0).forEach((done) => done());
  }

  lines(): Array<Record<string, unknown>> {
    return this.writes
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

describe(LogOutput.name, () => {
  let reader: Reader;
  let output: LogOutput;

  beforeEach(() => {
    reader = new Reader();
    output = new LogOutput(config, reader);
  });

  afterEach(() => output.abandon());

  it('hands lines logged close together to stdout in one write, in the order they were logged', async () => {
    output.logger.info('first');
    output.writeLine('info', '"n":1,"msg":"request"', (fields) => fields);
    await nextTurn();
    output.logger.warn('second');
    expect(reader.writes).toEqual([]);
    await handedOver();
    expect(reader.writes).toHaveLength(1);
    expect(reader.lines().map((line) => [line.level, line.msg])).toEqual([
      ['info', 'first'],
      ['info', 'request'],
      ['warn', 'second'],
    ]);
  });

  it('writes lines logged after a write in a write of their own', async () => {
    output.logger.info('a');
    await handedOver();
    output.logger.info('b');
    await handedOver();
    expect(reader.writes).toHaveLength(2);
  });

  it('writes at once, without waiting for the interval, when LOG_FLUSH_BYTES are waiting', () => {
    const filler = 'x'.repeat(1000);
    for (let i = 0; i * 1000 < LOG_FLUSH_BYTES; i++) output.logger.info({ filler }, `line ${i}`);
    expect(reader.writes).toHaveLength(1);
    expect(reader.writes[0].length).toBeGreaterThanOrEqual(LOG_FLUSH_BYTES);
  });

  it('frames a written line as pino frames its own: level, time, pid and hostname first', async () => {
    output.writeLine('warn', { status: 499 }, ({ status }) => `"status":${status},"msg":"GET /x aborted"`);
    await handedOver();
    const [line] = reader.lines();
    expect(Object.keys(line)).toEqual(['level', 'time', 'pid', 'hostname', 'status', 'msg']);
    expect(line).toMatchObject({ level: 'warn', pid: process.pid, status: 499 });
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
  });

  it('serializes a line when it is handed over, with the time it was logged', async () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.UTC(2026, 10, 24, 1, 2, 3, 4));
    const serialize = jest.fn((n: number) => `"n":${n},"msg":"deferred"`);
    output.writeLine('info', 7, serialize);
    expect(serialize).not.toHaveBeenCalled();
    now.mockReturnValue(Date.UTC(2026, 10, 24, 1, 2, 5, 0));
    output.flush();
    now.mockRestore();
    await nextTurn();
    expect(serialize).toHaveBeenCalledWith(7);
    expect(reader.lines()).toEqual([
      expect.objectContaining({ time: '2026-11-24T01:02:03.004Z', n: 7, msg: 'deferred' }),
    ]);
  });

  /** Fills what may wait for a stalled reader, in lines of about 1 KiB, until one is dropped. */
  async function stallAndOverflow(): Promise<number> {
    reader.stalled = true;
    const filler = 'x'.repeat(1000);
    let logged = 0;
    while (output.droppedLines === 0 && logged < 4 * (LOG_BUFFER_BYTES / 1000)) {
      for (let i = 0; i < 100; i++, logged++) output.logger.info({ filler }, `line ${logged}`);
      await nextTurn();
    }
    return logged;
  }

  it('never lets more than LOG_BUFFER_BYTES wait for a stalled reader; counts every line it drops', async () => {
    const logged = await stallAndOverflow();
    expect(output.droppedLines).toBeGreaterThan(0);
    expect(reader.writableLength).toBeLessThanOrEqual(LOG_BUFFER_BYTES);
    // Every line is either waiting for the reader or counted as dropped.
    reader.resume();
    await handedOver();
    const written = reader.lines().filter((line) => String(line.msg).startsWith('line '));
    expect(written.length + output.droppedLines).toBe(logged);
  });

  it('drops request lines without serializing them while a stalled reader holds the limit', () => {
    reader.stalled = true;
    reader.write('x'.repeat(LOG_BUFFER_BYTES));
    const dropped = output.droppedLines;
    const serialize = jest.fn(() => '"msg":"never made"');
    output.writeLine('info', {}, serialize);
    output.flush();
    expect(serialize).not.toHaveBeenCalled();
    expect(output.droppedLines).toBe(dropped + 1);
  });

  it('says how many lines were dropped once the reader takes lines again', async () => {
    await stallAndOverflow();
    const dropped = output.droppedLines;
    reader.resume();
    await handedOver();
    expect(reader.lines().find((line) => String(line.msg).startsWith('Log output could not keep up'))).toMatchObject({
      level: 'warn',
      droppedLines: dropped,
    });
  });

  it('writes nothing more, and throws nothing, once the reader is gone (EPIPE)', async () => {
    reader.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    output.logger.info('after');
    await handedOver();
    expect(reader.writes).toEqual([]);
  });

  it('writes the waiting lines at once on close, and nothing logged after it', async () => {
    output.logger.info('last');
    await output.close(1000);
    expect(reader.lines().map((line) => line.msg)).toEqual(['last']);
    output.logger.info('too late');
    output.writeLine('info', 'too late', (msg) => `"msg":"${msg}"`);
    await handedOver();
    expect(reader.lines().map((line) => line.msg)).toEqual(['last']);
  });

  it('waits on close at most the time it is given for a reader that does not read', async () => {
    reader.stalled = true;
    output.logger.info({ filler: 'x'.repeat(20_000) }, 'more than the stream holds without waiting');
    await handedOver();
    const started = Date.now();
    await output.close(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('lets go of unwritten lines at once when abandoned', async () => {
    output.logger.info('never written');
    output.abandon();
    await handedOver();
    expect(reader.writes).toEqual([]);
  });
});

describe('LogOutput with stdout redirected to a file', () => {
  /**
   * Runs `script` in a process of its own whose stdout is a fresh file, with one thread in libuv's
   * pool, and returns what it printed on stderr and the file's lines.
   */
  function withStdoutAFile(script: string): { stderr: string; lines: Array<Record<string, unknown>> } {
    const dir = mkdtempSync(join(tmpdir(), 'log-output-'));
    const file = join(dir, 'stdout.log');
    const fd = openSync(file, 'w');
    try {
      const { stderr } = spawnSync(
        process.execPath,
        ['-r', require.resolve('ts-node/register/transpile-only'), '-e', script],
        {
          env: { PATH: process.env.PATH, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'), UV_THREADPOOL_SIZE: '1' },
          stdio: ['ignore', fd, 'pipe'],
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      const lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      return { stderr, lines };
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const setUp = `
    const { fstatSync } = require('node:fs');
    const { LogOutput } = require(${JSON.stringify(join(__dirname, 'log-output.ts'))});
    const output = new LogOutput({ level: 'info', pretty: false });
  `;

  it('hands the file its lines without holding the event loop while the write has not returned', () => {
    // The pool's one thread busy (as with a disk that stalls): a write through it must wait, and
    // the event loop goes on meanwhile; a synchronous write would already be in the file.
    const { stderr, lines } = withStdoutAFile(`${setUp}
      require('node:crypto').pbkdf2('stalled', 'disk', 200000, 32, 'sha256', () => undefined);
      const filler = 'x'.repeat(1000);
      for (let i = 0; i < 100; i++) output.logger.info({ filler }, 'line ' + i);
      output.flush();
      const bytesWhenHandedOver = fstatSync(1).size;
      setTimeout(() => {
        const loopRanWhileWaiting = fstatSync(1).size === 0;
        output.close(30000).then(() => process.stderr.write(JSON.stringify({ bytesWhenHandedOver, loopRanWhileWaiting })));
      }, 0);
    `);
    expect(JSON.parse(stderr)).toEqual({ bytesWhenHandedOver: 0, loopRanWhileWaiting: true });
    expect(lines.map((line) => line.msg)).toEqual(Array.from({ length: 100 }, (_, i) => `line ${i}`));
  });

  it('still writes the lines not handed over yet when the process exits at once', () => {
    const { lines } = withStdoutAFile(`${setUp}
      output.logger.error('the last line before a crash');
      process.exit(1);
    `);
    expect(lines.map((line) => line.msg)).toEqual(['the last line before a crash']);
  });
});
