import express from 'express';
import { LosslessNumber, parse } from 'lossless-json';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { exactBody, expectedPlant, plantText } from './utils/bodies';
import { testDatabases } from './utils/databases';
import {
  OPENAPI_PATH,
  OpenApiContract,
  RecordedResponse,
  addRecordedResponse,
  assertRecordedResponsesMatchContract,
  contract,
  exactNumber,
  recordResponses,
  recordedViolations,
  takeRecordedResponses,
} from './utils/openapi-contract';
import { TestApp, bearer, startTestApp } from './utils/test-app';

const JSON_TYPE = 'application/json; charset=utf-8';
const INT64_MAX = 9223372036854775807n;

/** A response as the recorder would capture it. */
function response(
  method: string,
  url: string,
  status: number,
  body = '',
  headers: RecordedResponse['headers'] = {},
): RecordedResponse {
  return {
    method,
    url,
    status,
    headers: body ? { 'content-type': JSON_TYPE, ...headers } : headers,
    body: Buffer.from(body, 'utf8'),
  };
}

const error = (status: number) => JSON.stringify({ error: status, message: 'something went wrong' });

describe('the OpenAPI contract checker', () => {
  const checker = contract();
  const ok = (r: RecordedResponse) => expect(checker.check(r)).toEqual([]);
  const broken = (r: RecordedResponse, ...problems: RegExp[]) => {
    const found = checker.check(r);
    expect(found.length).toBeGreaterThan(0);
    for (const problem of problems) expect(found.join('\n')).toMatch(problem);
  };

  describe('accepts what the document describes', () => {
    it.each([
      ['a created plant', response('POST', '/plants', 200, plantText({ id: 7, name: 'Monstera', tag: 'tropical' }))],
      ['int64 max, beyond 2^53', response('POST', '/plants', 200, plantText({ id: INT64_MAX, name: 'x' }))],
      ['int64 min', response('POST', '/plants', 200, plantText({ id: -INT64_MAX - 1n, name: 'x' }))],
      [
        'a page with a Link',
        response('GET', '/plants?limit=1', 200, `[${plantText({ id: 1, name: 'a' })}]`, {
          link: '<?limit=1&after=1>; rel="next"',
        }),
      ],
      ['an empty page', response('GET', '/plants', 200, '[]')],
      ['a delete', response('DELETE', '/plants/-9223372036854775808', 204)],
      ['a 409', response('POST', '/plants', 409, error(409))],
      [
        'a 401 with its challenge',
        response('GET', '/plants', 401, error(401), { 'www-authenticate': 'Bearer realm="plant-store"' }),
      ],
      ['a 400 to an invalid id', response('DELETE', '/plants/abc', 400, error(400))],
      ['an unknown route as a 404 Error', response('GET', '/nope/deeper?x=1', 404, error(404))],
      ['an unsupported method as a 404 Error', response('PUT', '/plants', 404, error(404))],
      [
        'malformed percent-encoding in an unknown path as a 400 Error (docs/api.md)',
        response('GET', '/%zz/x', 400, error(400)),
      ],
      [
        'a HEAD to an unknown route (404, no body)',
        { ...response('HEAD', '/nope', 404), headers: { 'content-type': JSON_TYPE } },
      ],
      [
        'a CORS preflight answered by the CORS layer',
        {
          ...response('OPTIONS', '/plants/1', 204),
          requestHeaders: { origin: 'https://app.example.com', 'access-control-request-method': 'DELETE' },
        },
      ],
      [
        'the Swagger UI page (exempt)',
        {
          ...response('GET', '/docs', 200),
          headers: { 'content-type': 'text/html' },
          body: Buffer.from('<html></html>'),
        },
      ],
      ['the JSON document (exempt)', response('GET', '/docs-json', 200, '{"openapi":"3.0.0"}')],
    ])('%s', (_label, r) => ok(r));
  });

  describe('rejects', () => {
    it('an undocumented status', () => {
      broken(
        response('POST', '/plants', 201, plantText({ id: 7, name: 'x' })),
        /status 201 is not documented for POST \/plants/,
      );
      broken(response('DELETE', '/plants/7', 418, error(418)), /status 418 is not documented/);
      broken(response('GET', '/plants', 404, error(404)), /status 404 is not documented for GET \/plants/);
    });

    it.each([
      [
        'a plant without a name',
        response('POST', '/plants', 200, plantText({ id: 7, name: undefined })),
        /must have required property 'name'/,
      ],
      [
        'a name that is a number',
        response('POST', '/plants', 200, plantText({ id: 7, name: 5 })),
        /\/name must be string/,
      ],
      [
        'a tag of null (never null, docs/api.md)',
        response('POST', '/plants', 200, plantText({ id: 7, name: 'x', tag: null })),
        /\/tag must be string/,
      ],
      ['a page that is an object', response('GET', '/plants', 200, plantText({ id: 7, name: 'x' })), /must be array/],
      ['an Error without a message', response('POST', '/plants', 400, '{"error":400}'), /required property 'message'/],
      [
        'an Error of the wrong status',
        response('POST', '/plants', 400, error(409)),
        /says error 409 but the status is 400/,
      ],
      [
        'a Nest-style error',
        response('POST', '/plants', 400, '{"statusCode":400,"message":"x"}'),
        /required property 'error'/,
      ],
      ['malformed JSON', response('POST', '/plants', 200, '{"id":7,'), /not valid JSON/],
      ['duplicate keys', response('POST', '/plants', 200, '{"id":7,"id":8,"name":"x"}'), /not valid JSON/],
    ])('a wrong body shape: %s', (_label, r, problem) => broken(r, problem));

    it('names a big integer outside int64 as such', () => {
      const body = plantText({ id: new LosslessNumber('9223372036854775808'), name: 'x' });
      expect(checker.check(response('POST', '/plants', 200, body))).toEqual([
        `body /id = 9223372036854775808 is outside the documented integer range or format: ${JSON.stringify(body)}`,
      ]);
    });

    it.each([
      ['a string', '"7"'],
      ['a fraction', '7.5'],
      ['one above int64', '9223372036854775808'],
      ['one below int64', '-9223372036854775809'],
      ['far above int64, written with an exponent', '1e19'],
      ['a boolean', 'true'],
      ['null', 'null'],
    ])('a wrong id type: %s', (_label, id) => {
      const wrong = plantText({ id: parse(id), name: 'x' });
      broken(response('POST', '/plants', 200, wrong), /\/id/);
      broken(response('GET', '/plants', 200, `[${plantText({ id: 1, name: 'a' })},${wrong}]`), /\/1\/id/);
    });

    it('an undocumented path that is not a 404 Error', () => {
      broken(
        response('GET', '/admin', 200, '{"ok":true}'),
        /path not in the document, so it must be 404.*answered 200/,
      );
      broken(response('GET', '/plants/1/extra', 500, error(500)), /path not in the document.*answered 500/);
      broken(
        response('GET', '/admin', 404, '{"statusCode":404,"message":"Not Found"}'),
        /path not in the document: body/,
      );
      broken(
        {
          ...response('GET', '/admin', 404),
          headers: { 'content-type': 'text/html' },
          body: Buffer.from('<h1>Not Found</h1>'),
        },
        /not application\/json/,
      );
      broken(response('GET', '/docsy', 200, '{}'), /path not in the document/);
      broken(response('GET', '/nope', 400, error(400)), /path not in the document, so it must be 404.*answered 400/);
      broken(response('GET', '/%zz/x', 500, error(500)), /malformed percent-encoding, so it must be 400 or 404/);
    });

    it('an undocumented method on a documented path that is not a 404 Error', () => {
      broken(response('PUT', '/plants', 200, '[]'), /method PUT not documented for \/plants/);
      broken(response('HEAD', '/plants', 200), /method HEAD not documented/);
      // Without the preflight headers an OPTIONS is an ordinary request for an undocumented method.
      broken(response('OPTIONS', '/plants/1', 204), /method OPTIONS not documented for \/plants\/\{id\}/);
    });

    it('a success answered to an invalid path parameter', () => {
      broken(response('DELETE', '/plants/abc', 204), /invalid path parameter.*id="abc"/);
      broken(response('DELETE', '/plants/9223372036854775808', 204), /invalid path parameter/);
      broken(response('DELETE', '/plants/%E0%A4%A', 204), /malformed percent-encoding/);
    });

    it('a body where none is documented, none where one is, or an undocumented media type', () => {
      broken(response('DELETE', '/plants/1', 200, '{}'), /status 200 is not documented/);
      broken({ ...response('DELETE', '/plants/1', 404), headers: {}, body: Buffer.alloc(0) }, /no body/);
      broken(
        { ...response('POST', '/plants', 200), headers: { 'content-type': 'text/plain' }, body: Buffer.from('ok') },
        /Content-Type "text\/plain" is not documented/,
      );
      broken(
        {
          ...response('POST', '/plants', 200),
          headers: { 'content-type': JSON_TYPE },
          body: Buffer.from([0xff, 0xfe]),
        },
        /not valid UTF-8/,
      );
    });
  });

  describe('reads the document, not a fixed list of operations', () => {
    const document = () => JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));

    it('demands a header the document declares required', () => {
      const doc = document();
      doc.paths['/plants'].get.responses['200'].headers.Link.required = true;
      const strict = new OpenApiContract(doc);
      expect(strict.check(response('GET', '/plants', 200, '[]'))).toEqual(['required header Link is missing']);
      expect(strict.check(response('GET', '/plants', 200, '[]', { link: '<?limit=1&after=1>; rel="next"' }))).toEqual(
        [],
      );
    });

    it('checks a present header against its schema, read from text', () => {
      const doc = document();
      doc.paths['/plants'].get.responses['200'].headers['Retry-After'] = {
        required: true,
        schema: { type: 'integer', minimum: 0 },
      };
      const strict = new OpenApiContract(doc);
      expect(strict.check(response('GET', '/plants', 200, '[]', { 'retry-after': '30' }))).toEqual([]);
      expect(strict.check(response('GET', '/plants', 200, '[]', { 'retry-after': 'soon' })).join()).toMatch(
        /header Retry-After/,
      );
      expect(strict.check(response('GET', '/plants', 200, '[]', { 'retry-after': '-1' })).join()).toMatch(
        /header Retry-After/,
      );
    });

    it('checks an operation added to the document, and a default response', () => {
      const doc = document();
      doc.paths['/not-yet/documented'] = {
        get: {
          responses: {
            '200': {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['status'],
                    properties: { status: { type: 'string', enum: ['ok'] } },
                  },
                },
              },
            },
            default: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          },
        },
      };
      const grown = new OpenApiContract(doc);
      expect(grown.check(response('GET', '/not-yet/documented', 200, '{"status":"ok"}'))).toEqual([]);
      expect(grown.check(response('GET', '/not-yet/documented', 503, error(503)))).toEqual([]);
      expect(grown.check(response('GET', '/not-yet/documented', 200, '{"status":"down"}')).join()).toMatch(
        /status must be equal to one of the allowed values/,
      );
      expect(checker.check(response('GET', '/not-yet/documented', 200, '{"status":"ok"}')).join()).toMatch(
        /path not in the document/,
      );
    });

    it('reads OpenAPI 3.0 nullable and boolean exclusive bounds', () => {
      const doc = document();
      doc.components.schemas.Plant.properties.tag.nullable = true;
      doc.components.schemas.Plant.properties.id.minimum = 0;
      doc.components.schemas.Plant.properties.id.exclusiveMinimum = true;
      const relaxed = new OpenApiContract(doc);
      const created = (plant: { id: bigint | number; name: string; tag?: null }) =>
        relaxed.check(response('POST', '/plants', 200, plantText(plant)));
      expect(created({ id: 1, name: 'x', tag: null })).toEqual([]);
      expect(created({ id: INT64_MAX, name: 'x' })).toEqual([]);
      expect(created({ id: 0, name: 'x' }).join()).toMatch(/\/id/);
      expect(created({ id: -INT64_MAX - 1n, name: 'x' }).join()).toMatch(/\/id/);
    });
  });

  it('reads numbers exactly', () => {
    expect(exactNumber('9223372036854775807')).toBe(9223372036854775807n);
    expect(exactNumber('9007199254740993')).toBe(9007199254740993n);
    expect(exactNumber('9007199254740991')).toBe(9007199254740991);
    expect(exactNumber('-0')).toBe(0);
    expect(exactNumber('1e19')).toBe(10000000000000000000n);
    expect(exactNumber('7.0')).toBe(7);
    expect(exactNumber('7.5')).toBe(7.5);
    expect(Number.isNaN(exactNumber('1e-400'))).toBe(true);
  });
});

describe('recording what an Express app sends', () => {
  afterEach(() => takeRecordedResponses());

  it('captures status, headers and body bytes, and the afterEach check fails on a violation', async () => {
    const app = express();
    app.use(recordResponses());
    // A page whose plant is as documented but for its id, written as a string.
    const page = `[${plantText({ id: '7', name: 'string id' })}]`;
    app.get('/plants', (_req, res) => {
      res.status(200).type('application/json').end(page);
    });
    app.post('/plants', (_req, res) => {
      res.status(201).type('application/json').end('{"id":7,"name":"x"}');
    });
    app.get('/stream', (_req, res) => {
      res.status(200).type('application/json');
      res.write('{"a"');
      res.end(':1}');
    });
    takeRecordedResponses();
    await request(app).get('/plants').expect(200);
    await request(app).post('/plants').expect(201);
    await request(app).get('/stream').expect(200);

    const recorded = takeRecordedResponses();
    expect(recorded.map((r) => [r.method, r.url, r.status])).toEqual([
      ['GET', '/plants', 200],
      ['POST', '/plants', 201],
      ['GET', '/stream', 200],
    ]);
    expect(recorded[0].body.toString()).toBe(page);
    expect(recorded[0].headers['content-type']).toMatch(/^application\/json/);
    expect(recorded[2].body.toString()).toBe('{"a":1}');

    recorded.forEach(addRecordedResponse);
    expect(() => assertRecordedResponsesMatchContract()).toThrow(
      /3 response\(s\) broke the OpenAPI contract[\s\S]*GET \/plants -> 200: body \/0\/id[\s\S]*POST \/plants -> 201: status 201 is not documented[\s\S]*GET \/stream -> 200: path not in the document/,
    );
    expect(recordedViolations()).toEqual([]);
  });
});

describe.each(testDatabases())('the test app on %s is recorded', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp(database);
  });
  afterAll(() => t.close());

  it('records each response exactly as sent, and it keeps the contract', async () => {
    await t.reset();
    const token = await t.token({ subject: 'recorder' });
    takeRecordedResponses();
    await t
      .http()
      .post('/plants')
      .set(bearer(token))
      .set('Content-Type', 'application/json')
      .send('{"id":9223372036854775807,"name":"big"}')
      .expect(200);
    const listed = await t.http().get('/plants').set(bearer(token)).expect(200);
    await t.http().get('/nowhere').expect(404);
    const recorded = takeRecordedResponses();
    expect(recorded.map((r) => `${r.method} ${r.url} ${r.status}`)).toEqual([
      'POST /plants 200',
      'GET /plants 200',
      'GET /nowhere 404',
    ]);
    expect(recorded[1].body.toString()).toBe(listed.text);
    expect(exactBody(listed.text)).toEqual([expectedPlant({ id: INT64_MAX, name: 'big' })]);
    expect(recorded.flatMap((r) => contract().check(r))).toEqual([]);
  });
});
