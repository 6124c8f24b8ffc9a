import { connect } from 'node:net';
import { listenOnLoopback } from './utils/raw-http';
import { expectedPlant } from './utils/bodies';
import { testDatabases } from './utils/databases';
import { TestApp, bearer, startTestApp } from './utils/test-app';

interface Answer {
  status: number;
  body: string;
}

/**
 * Writes every request on one connection in a single write (a pipeline) and reads `count` answers,
 * each framed by its Content-Length.
 */
function pipeline(port: number, requests: string[], count: number): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffer = Buffer.alloc(0);
    const answers: Answer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${answers.length} of ${count} answers within 10 s`));
    }, 10_000);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = buffer.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) break;
        answers.push({
          status: Number(head.slice(9, 12)),
          body: buffer.subarray(end + 4, end + 4 + length).toString('utf8'),
        });
        buffer = buffer.subarray(end + 4 + length);
      }
      if (answers.length >= count) {
        clearTimeout(timer);
        socket.destroy();
        resolve(answers);
      }
    });
    socket.on('error', reject);
    socket.write(requests.join(''));
  });
}

describe.each(testDatabases())('Pipelined requests on %s', (database) => {
  let t: TestApp;
  let port: number;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database);
    port = await listenOnLoopback(t.app);
  });
  beforeEach(async () => {
    await t.reset();
    token = await t.token({ subject: 'piper', scopes: ['plants:read', 'plants:write'] });
  });
  afterAll(() => t.close());

  const auth = () => `Authorization: ${bearer(token).Authorization}\r\n`;
  const create = (id: number, name: string) => {
    const body = JSON.stringify({ id, name });
    return `POST /plants HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  };
  const remove = (id: number) => `DELETE /plants/${id} HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`;
  const list = () => `GET /plants HTTP/1.1\r\nHost: x\r\n${auth()}\r\n`;

  it('runs a create and a delete of the same id in the order they were sent', async () => {
    const answers = await pipeline(port, [create(7, 'Fern'), remove(7)], 2);
    expect(answers.map((a) => a.status)).toEqual([200, 204]);
    const after = await t.http().get('/plants').set(bearer(token));
    expect(after.body).toEqual([]);
  });

  it('lets a list sent after writes see them, and a write after a list not show in it', async () => {
    const answers = await pipeline(port, [create(1, 'Moss'), create(2, 'Ivy'), list(), remove(1), list()], 5);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 204, 200]);
    expect(JSON.parse(answers[2].body)).toEqual([
      expectedPlant({ id: 1, name: 'Moss' }),
      expectedPlant({ id: 2, name: 'Ivy' }),
    ]);
    expect(JSON.parse(answers[4].body)).toEqual([expectedPlant({ id: 2, name: 'Ivy' })]);
  });
});
