import { LogLevel } from '@nestjs/common';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigValidationError } from '../config/configuration';
import { LogOutput } from './log-output';
import { nestLogger } from './nest-logger';

describe(nestLogger.name, () => {
  const outputs: LogOutput[] = [];
  afterAll(() => Promise.all(outputs.map((output) => output.close(1000))));

  /** An output at `level` and the lines it hands over, parsed. */
  function capture(level: 'trace' | 'info' = 'info') {
    const written: string[] = [];
    const sink = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => (
        written.push(...String(chunk).split('\n').filter(Boolean)),
        done()
      ),
    });
    const output = new LogOutput({ level, pretty: false }, sink);
    outputs.push(output);
    /** The next `count` lines the output hands over. */
    const nextLines = async (count: number): Promise<Array<Record<string, unknown>>> => {
      const from = written.length;
      for (let waited = 0; written.length < from + count && waited < 2000; waited += 10) await sleep(10);
      return written.slice(from, from + count).map((line) => JSON.parse(line) as Record<string, unknown>);
    };
    return { output, logger: nestLogger(output), nextLines };
  }

  it('logs a wrong setting as one line per wrong variable, without the error or its stack', async () => {
    const { logger, nextLines } = capture();
    const problems = ['PORT must be an integer from 0 to 65535 (got "abc")', 'TRUST_PROXY must be true, ... (got "x")'];
    // As Nest's ExceptionHandler logs what stops the start: the error, an empty stack, its context.
    logger.error(new ConfigValidationError(problems), undefined, 'ExceptionHandler');
    const lines = await nextLines(problems.length);
    expect(lines).toEqual(
      problems.map((problem) => ({
        level: 'error',
        time: expect.any(String),
        pid: expect.any(Number),
        hostname: expect.any(String),
        context: 'ExceptionHandler',
        msg: `Invalid configuration: ${problem}`,
      })),
    );
  });

  it('logs any other error with its stack', async () => {
    const { logger, nextLines } = capture();
    logger.error(new Error('boom'), undefined, 'ExceptionHandler');
    const [line] = await nextLines(1);
    expect(line).toMatchObject({ level: 'error', context: 'ExceptionHandler', msg: 'boom' });
    expect(line.err).toMatchObject({ message: 'boom', stack: expect.stringMatching(/^Error: boom\n\s+at /) });
  });

  it("writes each of Nest's levels as pino's, with the context and the message", async () => {
    const { logger, nextLines } = capture('trace');
    const levels: [LogLevel, string][] = [
      ['verbose', 'trace'],
      ['debug', 'debug'],
      ['log', 'info'],
      ['warn', 'warn'],
      ['error', 'error'],
      ['fatal', 'fatal'],
    ];
    for (const [method] of levels) logger[method]!(`a ${method} line`, 'Context');
    const lines = await nextLines(levels.length);
    expect(lines.map(({ level, context, msg }) => ({ level, context, msg }))).toEqual(
      levels.map(([method, level]) => ({ level, context: 'Context', msg: `a ${method} line` })),
    );
  });

  it('leaves out lines below the level and writes a line without a context without one', async () => {
    const { logger, nextLines } = capture('info');
    logger.debug!('not written', 'Context');
    logger.log('no context');
    const [line] = await nextLines(1);
    expect(line).toMatchObject({ level: 'info', msg: 'no context' });
    expect(line).not.toHaveProperty('context');
  });

  it("writes an object's fields as the line's, and parameters between the message and the context as its format arguments", async () => {
    const { logger, nextLines } = capture();
    logger.warn({ requestId: 'r-1', msg: 'GET /plants -> 503: the database is unavailable' }, 'AllExceptionsFilter');
    logger.log('%d plants of %s', 3, 'alice', 'Plants');
    const [object, formatted] = await nextLines(2);
    expect(object).toMatchObject({
      level: 'warn',
      context: 'AllExceptionsFilter',
      requestId: 'r-1',
      msg: 'GET /plants -> 503: the database is unavailable',
    });
    expect(formatted).toMatchObject({ level: 'info', context: 'Plants', msg: '3 plants of alice' });
  });

  it("writes the stack Nest's exception handlers pass after a message as the err of that message", async () => {
    const { logger, nextLines } = capture();
    const stack = 'Error: lost\n    at handler (plants.controller.ts:1:1)';
    logger.error('lost', stack, 'ExceptionsHandler');
    const [line] = await nextLines(1);
    expect(line).toMatchObject({ level: 'error', context: 'ExceptionsHandler', msg: 'lost' });
    expect(line.err).toMatchObject({ message: 'lost', stack });
  });

  it('writes to its own output, whatever output a logger was made for before it', async () => {
    const first = capture();
    const second = capture();
    second.logger.log('to the second', 'Context');
    first.logger.log('to the first', 'Context');
    const [[onFirst], [onSecond]] = await Promise.all([first.nextLines(1), second.nextLines(1)]);
    expect([onFirst?.msg, onSecond?.msg]).toEqual(['to the first', 'to the second']);
  });
});
