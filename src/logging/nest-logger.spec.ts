import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigValidationError } from '../config/configuration';
import { LogOutput } from './log-output';
import { nestLogger } from './nest-logger';

describe(nestLogger.name, () => {
  let written: string[];
  // One output for the file: nestjs-pino keeps the first root logger of the process.
  let output: LogOutput;

  beforeAll(() => {
    written = [];
    const sink = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => (
        written.push(...String(chunk).split('\n').filter(Boolean)),
        done()
      ),
    });
    output = new LogOutput({ level: 'info', pretty: false }, sink);
  });
  afterAll(() => output.close(1000));

  /** The next `count` lines the output hands over. */
  async function nextLines(count: number): Promise<Array<Record<string, unknown>>> {
    const from = written.length;
    for (let waited = 0; written.length < from + count && waited < 2000; waited += 10) await sleep(10);
    return written.slice(from, from + count).map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it('logs a wrong setting as one line per wrong variable, without the error or its stack', async () => {
    const problems = ['PORT must be an integer from 0 to 65535 (got "abc")', 'TRUST_PROXY must be true, ... (got "x")'];
    // As Nest's ExceptionHandler logs what stops the start: the error, an empty stack, its context.
    nestLogger(output).error(new ConfigValidationError(problems), undefined, 'ExceptionHandler');
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
    nestLogger(output).error(new Error('boom'), undefined, 'ExceptionHandler');
    const [line] = await nextLines(1);
    expect(line).toMatchObject({ level: 'error', context: 'ExceptionHandler', msg: 'boom' });
    expect(line.err).toMatchObject({ message: 'boom', stack: expect.stringMatching(/^Error: boom\n\s+at /) });
  });
});
