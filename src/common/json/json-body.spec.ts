import { BadRequestException, HttpException } from '@nestjs/common';
import { IncomingMessage, ServerResponse } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { parseJsonBody, readJsonBody } from './json-body';
import { BodyNotJson, BodyTooLarge } from './json-body.errors';
import { BODY_LIMIT_BYTES, MAX_JSON_DEPTH } from './json-body.limits';

function parseError(body: string): BadRequestException {
  try {
    parseJsonBody(body);
  } catch (error) {
    if (error instanceof BadRequestException) return error;
    throw error;
  }
  throw new Error(`parseJsonBody accepted ${body.slice(0, 40)}`);
}

describe(parseJsonBody.name, () => {
  it('reads integers as bigint, also beyond 2^53', () => {
    expect(
      parseJsonBody('{"a":1,"b":-7,"c":9007199254740993,"d":9223372036854775807,"e":-9223372036854775808}'),
    ).toEqual({
      a: 1n,
      b: -7n,
      c: 9007199254740993n,
      d: 9223372036854775807n,
      e: -9223372036854775808n,
    });
  });

  it('keeps integers past int64 exact too, for validation to refuse', () => {
    expect(parseJsonBody('[9223372036854775808, 123456789012345678901234567890]')).toEqual([
      9223372036854775808n,
      123456789012345678901234567890n,
    ]);
  });

  it('reads fractions and exponents as plain numbers', () => {
    const body = parseJsonBody('{"half":1.5,"thousand":1e3,"tiny":-2.5E-3}') as Record<string, unknown>;
    expect(body).toEqual({ half: 1.5, thousand: 1000, tiny: -0.0025 });
    expect(typeof body.thousand).toBe('number');
  });

  it('reads other JSON values as JSON.parse does', () => {
    expect(parseJsonBody('{"s":"🌵 \\u00e9","t":true,"f":false,"n":null,"a":[],"o":{}}')).toEqual({
      s: '🌵 é',
      t: true,
      f: false,
      n: null,
      a: [],
      o: {},
    });
    expect(parseJsonBody('"text"')).toBe('text');
    expect(parseJsonBody('null')).toBeNull();
  });

  it('accepts a repeated key with the same value', () => {
    expect(parseJsonBody('{"name":"a","name":"a"}')).toEqual({ name: 'a' });
  });

  it('refuses a repeated key with different values', () => {
    const error = parseError('{"name":"a","name":"b"}');
    expect(error.message).toMatch(/^Malformed JSON: .*Duplicate key 'name'/);
  });

  it.each(['{"__proto__":{"admin":true}}', '{"plant":{"__proto__":{"admin":true}}}', '[{"__proto__":null}]'])(
    'refuses a __proto__ key anywhere: %s',
    (body) => {
      expect(parseError(body).message).toBe('The JSON key "__proto__" is not allowed');
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    },
  );

  it('allows "__proto__" as a string value', () => {
    expect(parseJsonBody('{"name":"__proto__"}')).toEqual({ name: '__proto__' });
  });

  it.each(['{"id":', '{id:1}', "{'id':1}", '{"id":1,}', '[1 2]', 'undefined', 'NaN', '{"id":01}'])(
    'refuses malformed JSON %p',
    (body) => {
      expect(parseError(body).message).toMatch(/^Malformed JSON: ./);
    },
  );

  it('refuses nesting deeper than MAX_JSON_DEPTH with a 400 before anything recurses, not a crash', () => {
    expect(parseError('['.repeat(100_000)).message).toBe(`Malformed JSON: nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(parseError(`${'['.repeat(50_000)}${']'.repeat(50_000)}`).message).toBe(
      `Malformed JSON: nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
    const deepest = `${'{"a":'.repeat(MAX_JSON_DEPTH)}1${'}'.repeat(MAX_JSON_DEPTH)}`;
    expect(() => parseJsonBody(deepest)).not.toThrow();
    expect(parseError(`[${deepest}]`).message).toContain('nested deeper');
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const name = `${'[{'.repeat(40)}\\"${'['.repeat(40)}`;
    const body = JSON.stringify({ name });
    expect(parseJsonBody(body)).toEqual({ name });
  });
});

// superagent would JSON-encode a Buffer sent as application/json; its typing only admits strings.
const asIs = (body: unknown) => body as string;

const ENCODING_MESSAGE = 'Request body must be UTF-8 JSON, sent as is or gzip, deflate or br encoded';

describe(readJsonBody.name, () => {
  let received: { body: unknown } | undefined;

  // A bare HTTP handler: the reader's own behaviour, without Nest's router or filter.
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    readJsonBody(req, res).then(
      (body) => {
        received = { body };
        res.end('read');
      },
      (error: HttpException) => {
        res.statusCode = error.getStatus();
        res.end(error.message);
      },
    );
  };

  const postJson = () => request(handler).post('/').set('Content-Type', 'application/json');

  beforeEach(() => {
    received = undefined;
  });

  it('finds no body in a request without one', async () => {
    await request(handler).get('/plants').expect(200, 'read');
    expect(received).toEqual({ body: undefined });
  });

  it('parses a JSON body losslessly', async () => {
    await postJson().send('{"id":9223372036854775807,"name":"Fern"}').expect(200, 'read');
    expect(received).toEqual({ body: { id: 9223372036854775807n, name: 'Fern' } });
  });

  it('accepts +json media types and an explicit UTF-8 charset', async () => {
    await request(handler).post('/').set('Content-Type', 'application/merge-patch+json').send('{"a":1}').expect(200);
    expect(received).toEqual({ body: { a: 1n } });
    await request(handler)
      .post('/')
      .set('Content-Type', 'application/json; charset=UTF-8')
      .send('{"b":"é"}')
      .expect(200);
    expect(received).toEqual({ body: { b: 'é' } });
  });

  it('leaves an empty body of any type undefined', async () => {
    await postJson().send('').expect(200);
    expect(received).toEqual({ body: undefined });
    await request(handler).post('/').set('Content-Type', 'text/plain').send('').expect(200);
    expect(received).toEqual({ body: undefined });
  });

  it.each([
    ['gzip', gzipSync],
    ['x-gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
    ['GZIP', gzipSync],
  ])('reads a %s-encoded body', async (coding, encode) => {
    await postJson().set('Content-Encoding', coding).serialize(asIs).send(encode('{"id":5}')).expect(200, 'read');
    expect(received).toEqual({ body: { id: 5n } });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx'])(
    'refuses a %s body with 415 before reading it',
    async (type) => {
      const res = await request(handler).post('/').set('Content-Type', type).send('{"id":5}');
      expect(res.status).toBe(415);
      expect(res.text).toBe(new BodyNotJson().message);
      expect(received).toBeUndefined();
    },
  );

  it('refuses a charset it cannot decode with 415', async () => {
    const res = await request(handler).post('/').set('Content-Type', 'application/json; charset=x-unknown').send('{}');
    expect(res.status).toBe(415);
    expect(res.text).toBe(ENCODING_MESSAGE);
  });

  // zstd included: every supported Node line could decode it; the contract does not offer it.
  it.each(['compress', 'zstd', 'gzip, br', 'toString', 'x-unknown'])(
    'refuses the content coding %p with 415',
    async (coding) => {
      const res = await postJson().set('Content-Encoding', coding).send('{}');
      expect(res.status).toBe(415);
      expect(res.text).toBe(ENCODING_MESSAGE);
    },
  );

  it('answers 400 when the body cannot be decoded', async () => {
    const res = await postJson().set('Content-Encoding', 'gzip').serialize(asIs).send(Buffer.from('not gzip at all'));
    expect(res.status).toBe(400);
    expect(res.text).toBe('Request body could not be decoded with its Content-Encoding');
  });

  it('takes a body of exactly the limit and refuses one byte more with 413', async () => {
    const json = '{"a":1}';
    const atLimit = json + ' '.repeat(BODY_LIMIT_BYTES - json.length);
    await postJson().send(atLimit).expect(200);
    expect(received).toEqual({ body: { a: 1n } });

    received = undefined;
    const res = await postJson().send(`${atLimit} `);
    expect(res.status).toBe(413);
    expect(res.text).toBe(new BodyTooLarge().message);
    expect(received).toBeUndefined();
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('caps the decoded %s body too: 413 one byte past the limit', async (coding, encode) => {
    const json = '{"a":1}';
    const atLimit = json + ' '.repeat(BODY_LIMIT_BYTES - json.length);
    await postJson().set('Content-Encoding', coding).serialize(asIs).send(encode(atLimit)).expect(200);
    const res = await postJson()
      .set('Content-Encoding', coding)
      .serialize(asIs)
      .send(encode(`${atLimit} `));
    expect(res.status).toBe(413);
  });

  it('answers malformed JSON with 400', async () => {
    const res = await postJson().send('{"id":');
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^Malformed JSON: /);
  });
});
