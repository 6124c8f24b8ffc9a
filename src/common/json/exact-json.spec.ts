import { Controller, Get, HttpCode, INestApplication, Module, NotFoundException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import fc from 'fast-check';
import { isInteger, parse } from 'lossless-json';
import request from 'supertest';
import { toExactJson, writeJsonExactly } from './exact-json';

@Controller()
class SampleController {
  @Get('plants')
  list(): unknown {
    return [
      { id: 9223372036854775807n, name: 'a' },
      { id: -9007199254740993n, name: 'b', tag: 't', gone: undefined },
    ];
  }

  @Get('plain')
  plain(): unknown {
    return { when: new Date(0), nested: { list: [1, 'two', null, true] } };
  }

  @Get('empty')
  @HttpCode(204)
  empty(): void {}

  @Get('empty-object')
  @HttpCode(204)
  emptyObject(): unknown {
    return { ignored: true };
  }

  @Get('text')
  text(): unknown {
    return { name: 'Monstera 🌿 déliciosa' };
  }

  @Get('string')
  string(): string {
    return 'sent by Express';
  }

  @Get('missing')
  missing(): never {
    throw new NotFoundException('no such plant');
  }
}

@Module({ controllers: [SampleController] })
class SampleModule {}

describe(writeJsonExactly.name, () => {
  let app: INestApplication;
  let other: express.Express;

  beforeAll(async () => {
    app = await NestFactory.create(SampleModule, new ExpressAdapter(express()), { logger: false });
    writeJsonExactly(app);
    await app.init();
    other = express();
    other.get('/', (_req, res) => void res.json({ n: 1 }));
  });

  afterAll(() => app.close());

  it('writes bigint values as plain JSON numbers, exactly, as UTF-8 JSON', async () => {
    const res = await request(app.getHttpServer()).get('/plants');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text).toBe('[{"id":9223372036854775807,"name":"a"},{"id":-9007199254740993,"name":"b","tag":"t"}]');
  });

  it('writes other values as JSON.stringify does', async () => {
    const res = await request(app.getHttpServer()).get('/plain');
    expect(res.text).toBe(JSON.stringify({ when: new Date(0), nested: { list: [1, 'two', null, true] } }));
  });

  it('leaves an empty response empty', async () => {
    const res = await request(app.getHttpServer()).get('/empty');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('counts Content-Length in bytes, not characters', async () => {
    const res = await request(app.getHttpServer()).get('/text');
    expect(res.text).toBe('{"name":"Monstera 🌿 déliciosa"}');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const get = await request(app.getHttpServer()).get('/plants');
    const head = await request(app.getHttpServer()).head('/plants');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.text ?? '').toBe('');
  });

  it('sends no body and no Content-Type with a 204, whatever the handler returned', async () => {
    const res = await request(app.getHttpServer()).get('/empty-object');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers['content-type']).toBeUndefined();
  });

  it("also writes the error bodies of Nest's own exception handling", async () => {
    const res = await request(app.getHttpServer()).get('/missing');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toEqual({ statusCode: 404, message: 'no such plant', error: 'Not Found' });
  });

  it.each([
    ['/plants', 'a JSON answer'],
    ['/string', 'an answer Express sends itself'],
  ])('sends no ETag and answers every conditional GET of %s (%s) in full', async (path) => {
    const plain = await request(app.getHttpServer()).get(path);
    expect(plain.headers.etag).toBeUndefined();
    for (const condition of [
      { 'If-None-Match': '*' },
      { 'If-Modified-Since': new Date(Date.now() + 60_000).toUTCString() },
    ]) {
      const res = await request(app.getHttpServer()).get(path).set(condition);
      expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: plain.text });
    }
  });

  it('changes only this application, not every Express app in the process', async () => {
    expect(other.response.json).not.toBe((app.getHttpAdapter().getInstance() as express.Express).response.json);
    await expect(
      request(other)
        .get('/')
        .then((res) => res.text),
    ).resolves.toBe('{"n":1}');
  });
});

describe(toExactJson.name, () => {
  it('writes what JSON.stringify writes for any value without a bigint', () => {
    const values = fc.oneof(
      fc.jsonValue(),
      fc.anything({
        withDate: true,
        withBoxedValues: true,
        withNullPrototype: true,
        withSparseArray: true,
        withObjectString: true,
      }),
    );
    fc.assert(
      fc.property(values, (value) => {
        expect(toExactJson(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: 1000 },
    );
  });

  it('writes every bigint as the exact integer it is', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    const plants = fc.array(
      fc.record({ id: int64, name: fc.string(), tag: fc.option(fc.string(), { nil: undefined }) }),
    );
    fc.assert(
      fc.property(plants, (list) => {
        const back = parse(toExactJson(list) as string, null, (n) => (isInteger(n) ? BigInt(n) : Number(n)));
        // An absent tag is left out, as JSON.stringify leaves out an undefined member.
        expect(back).toEqual(list.map(({ tag, ...rest }) => (tag === undefined ? rest : { ...rest, tag })));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves out what has no JSON text and calls toJSON with the key, as JSON.stringify does', () => {
    expect(toExactJson(undefined)).toBeUndefined();
    expect(toExactJson(() => 1)).toBeUndefined();
    expect(toExactJson({ a: undefined, b: () => 1, c: Symbol('s'), d: 1n })).toBe('{"d":1}');
    expect(toExactJson([undefined, () => 1, 2n])).toBe('[null,null,2]');
    expect(toExactJson({ at: { toJSON: (key: string) => `key:${key}` } })).toBe('{"at":"key:at"}');
    expect(toExactJson([{ toJSON: (key: string) => `key:${key}` }])).toBe('["key:0"]');
  });

  it('writes keys that need escaping, however many different keys it has seen', () => {
    const many = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`k"${i}\\\n`, i]));
    expect(toExactJson(many)).toBe(JSON.stringify(many));
    expect(toExactJson(many)).toBe(JSON.stringify(many));
  });
});
