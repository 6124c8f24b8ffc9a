import { INestApplication, Logger, Module, NotFoundException, UnprocessableEntityException } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { Test } from '@nestjs/testing';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { GLOBAL_PROVIDERS } from '../app.providers';
import { APP_OPTIONS } from '../app.setup';
import { BearerStrategy } from '../auth/bearer.strategy';
import { JwtVerifier } from '../auth/oidc/jwt-verifier';
import { Principal } from '../auth/principal';
import { TokensService } from '../auth/tokens.service';
import { writeJsonExactly } from '../common/json/exact-json';
import { IdempotencyService } from '../idempotency/idempotency.service';
import { examplePlant, plantText } from '../../test/utils/bodies';
import { CreatePlantDto } from './dto/create-plant.dto';
import { PLANT_NAME_MAX_LENGTH as NAME_MAX, PLANT_TAG_MAX_LENGTH as TAG_MAX } from './plants.limits';
import { PlantsController } from './plants.controller';
import { PlantsService } from './plants.service';
import { AuthenticationRequired, MissingScope } from '../auth/auth.errors';
import { Scope } from '../auth/scopes';
import { DatabaseUnavailable, InternalError } from '../common/filters/server.errors';
import { BodyNotJson, BodyTooLarge } from '../common/json/json-body.errors';
import { BODY_LIMIT_BYTES } from '../common/json/json-body.limits';
import { PlantAlreadyExists, PlantNotFound } from './plants.errors';

const WRITER_TOKEN = `pst_${'W'.repeat(43)}`;
const READER_TOKEN = `pst_${'R'.repeat(43)}`;
const WRITE_ONLY_TOKEN = `pst_${'O'.repeat(43)}`;
const PRINCIPALS: Record<string, Principal> = {
  [WRITER_TOKEN]: { subject: 'alice', scopes: ['plants:read', 'plants:write'], kind: 'pst', tokenId: 'writer' },
  [READER_TOKEN]: { subject: 'alice', scopes: ['plants:read'], kind: 'pst', tokenId: 'reader' },
  [WRITE_ONLY_TOKEN]: { subject: 'alice', scopes: ['plants:write'], kind: 'pst', tokenId: 'write-only' },
};

const INT64_MESSAGE = 'must be an integer from -9223372036854775808 to 9223372036854775807';

const plantsService = { create: jest.fn(), list: jest.fn(), remove: jest.fn() };
const tokensService = { authenticate: jest.fn() };
const idempotencyService = { begin: jest.fn(), succeed: jest.fn(), failed: jest.fn() };

/** The controller with AppModule's global providers (the rate limit is a middleware: not here), and no database. */
@Module({
  imports: [PassportModule],
  controllers: [PlantsController],
  providers: [
    ...GLOBAL_PROVIDERS,
    { provide: PlantsService, useValue: plantsService },
    { provide: TokensService, useValue: tokensService },
    { provide: IdempotencyService, useValue: idempotencyService },
    // No identity provider: every token takes the pst_ path.
    { provide: JwtVerifier, useValue: { accepts: () => false } },
    BearerStrategy,
  ],
})
class PlantsHttpTestModule {}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

function expectError(res: request.Response, status: number, message: string | RegExp): void {
  expect({ status: res.status, contentType: res.headers['content-type'] }).toEqual({
    status,
    contentType: expect.stringMatching(/^application\/json/),
  });
  expect(res.body).toStrictEqual({ error: status, message: expect.any(String) });
  if (typeof message === 'string') expect(res.body.message).toBe(message);
  else expect(res.body.message).toMatch(message);
}

describe(PlantsController.name, () => {
  let app: INestApplication;
  let logError: jest.SpyInstance;

  const http = () => request(app.getHttpServer());
  const postJson = (body: string, token = WRITER_TOKEN) =>
    http().post('/plants').set(bearer(token)).set('Content-Type', 'application/json').send(body);

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [PlantsHttpTestModule] }).compile();
    app = moduleRef.createNestApplication(APP_OPTIONS);
    writeJsonExactly(app);
    app.useLogger(false);
    await app.init();
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(() => {
    jest.resetAllMocks();
    tokensService.authenticate.mockImplementation(async (secret: string) => PRINCIPALS[secret] ?? null);
    // The plant as the service would answer it (its spec, and the repository's, say how it is made).
    plantsService.create.mockImplementation(async (_owner: string, dto: CreatePlantDto) => examplePlant(dto));
    plantsService.list.mockResolvedValue({ plants: [], limit: 1000 });
    plantsService.remove.mockResolvedValue(undefined);
    logError = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(() => {
    logError.mockRestore();
  });

  describe('POST /plants', () => {
    it('creates a plant for the caller and answers 200 with it', async () => {
      const res = await postJson('{"id":7,"name":"Fern","tag":"green"}');

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json; charset=utf-8/);
      expect(res.text).toBe(plantText({ id: 7, name: 'Fern', tag: 'green' }));
      expect(plantsService.create).toHaveBeenCalledTimes(1);
      const [owner, dto] = plantsService.create.mock.calls[0] as [string, CreatePlantDto];
      expect(owner).toBe('alice');
      expect(dto).toBeInstanceOf(CreatePlantDto);
      expect(dto).toStrictEqual(Object.assign(new CreatePlantDto(), { id: 7n, name: 'Fern', tag: 'green' }));
    });

    it.each(['9223372036854775807', '-9223372036854775808', '9007199254740993'])(
      'hands the service the exact bigint %s and writes it back as a raw JSON number',
      async (id) => {
        const res = await postJson(`{"id":${id},"name":"Big"}`);

        expect(res.status).toBe(200);
        expect(plantsService.create).toHaveBeenCalledWith('alice', expect.objectContaining({ id: BigInt(id) }));
        expect(res.text).toBe(plantText({ id: BigInt(id), name: 'Big' }));
        expect(res.text).toContain(`"id":${id},`);
      },
    );

    it('passes a null tag on as null', async () => {
      const res = await postJson('{"id":1,"name":"Moss","tag":null}');
      expect(res.status).toBe(200);
      expect(plantsService.create).toHaveBeenCalledWith('alice', expect.objectContaining({ tag: null }));
      expect(res.text).toBe(plantText({ id: 1, name: 'Moss' }));
    });

    it('counts an emoji as one character, so the longest name of them passes', async () => {
      const name = '🌵'.repeat(NAME_MAX);
      const res = await postJson(JSON.stringify({ id: 1, name }));
      expect(res.status).toBe(200);
      expect(plantsService.create).toHaveBeenCalledWith('alice', expect.objectContaining({ name }));
    });

    it('accepts the longest name and the longest tag', async () => {
      const res = await postJson(JSON.stringify({ id: 1, name: 'n'.repeat(NAME_MAX), tag: 't'.repeat(TAG_MAX) }));
      expect(res.status).toBe(200);
    });

    it.each([
      ['an unknown field', '{"id":1,"name":"a","color":"red"}', 'property color should not exist'],
      ...['valueOf', 'toString', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf', 'constructor'].map((key) => [
        `an unknown field named like the Object.prototype member ${key}`,
        `{"id":1,"name":"a","${key}":1}`,
        `property ${key} should not exist`,
      ]),
      ['id as the string "5"', '{"id":"5","name":"a"}', `id ${INT64_MESSAGE}`],
      ['id 1.5', '{"id":1.5,"name":"a"}', `id ${INT64_MESSAGE}`],
      ['id 1e3', '{"id":1e3,"name":"a"}', `id ${INT64_MESSAGE}`],
      ['id 9223372036854775808', '{"id":9223372036854775808,"name":"a"}', `id ${INT64_MESSAGE}`],
      ['id -9223372036854775809', '{"id":-9223372036854775809,"name":"a"}', `id ${INT64_MESSAGE}`],
      ['id true', '{"id":true,"name":"a"}', `id ${INT64_MESSAGE}`],
      ['no id', '{"name":"a"}', `id ${INT64_MESSAGE}`],
      ['a blank name', '{"id":1,"name":"   "}', 'name must not be blank'],
      ['an empty name', '{"id":1,"name":""}', `name must be from 1 to ${NAME_MAX} characters long`],
      [
        'a name one character too long',
        JSON.stringify({ id: 1, name: 'n'.repeat(NAME_MAX + 1) }),
        `name must be from 1 to ${NAME_MAX} characters long`,
      ],
      [
        'a name one emoji too long',
        JSON.stringify({ id: 1, name: '🌵'.repeat(NAME_MAX + 1) }),
        `name must be from 1 to ${NAME_MAX} characters long`,
      ],
      ['a name with a lone surrogate', '{"id":1,"name":"\\ud800"}', 'name must be valid Unicode text'],
      ['a numeric name', '{"id":1,"name":5}', 'name must be a string'],
      [
        'a tag one character too long',
        JSON.stringify({ id: 1, name: 'a', tag: 't'.repeat(TAG_MAX + 1) }),
        `tag must be from 1 to ${TAG_MAX} characters long`,
      ],
      ['an empty tag', '{"id":1,"name":"a","tag":""}', `tag must be from 1 to ${TAG_MAX} characters long`],
      ['a blank tag', '{"id":1,"name":"a","tag":" "}', 'tag must not be blank'],
    ])('answers %s with 400', async (_label, body, message) => {
      const res = await postJson(body);
      expectError(res, 400, message);
      expect(plantsService.create).not.toHaveBeenCalled();
    });

    it('names every problem in one message', async () => {
      const res = await postJson('{"id":"x","name":"","extra":1}');
      expectError(res, 400, /property extra should not exist/);
      expect(res.body.message).toContain(`id ${INT64_MESSAGE}`);
      expect(res.body.message).toContain(`name must be from 1 to ${NAME_MAX} characters long`);
    });

    it.each([
      ['an array', '[{"id":1,"name":"a"}]'],
      ['a string', '"plant"'],
      ['a number', '5'],
      ['null', 'null'],
    ])('answers a body that is %s with 400', async (_label, body) => {
      const res = await postJson(body);
      expectError(res, 400, 'Request body must be a JSON object');
      expect(plantsService.create).not.toHaveBeenCalled();
    });

    it('answers a missing body with 400 naming the required fields', async () => {
      const res = await http().post('/plants').set(bearer(WRITER_TOKEN));
      expectError(res, 400, new RegExp(`id ${INT64_MESSAGE}`));
      expect(res.body.message).toContain('name must');
    });

    it('answers malformed JSON with 400', async () => {
      const res = await postJson('{"id":1,"name":');
      expectError(res, 400, /^Malformed JSON: /);
    });

    it('answers a repeated key with different values with 400', async () => {
      const res = await postJson('{"id":1,"id":2,"name":"a"}');
      expectError(res, 400, /^Malformed JSON: .*Duplicate key 'id'/);
    });

    it('answers JSON nested too deeply with 400, not a crash', async () => {
      const res = await postJson('['.repeat(16_000));
      expectError(res, 400, /^Malformed JSON: /);
    });

    it.each(['{"__proto__":{"id":1},"id":1,"name":"a"}', '{"id":1,"name":"a","tag":{"__proto__":{}}}'])(
      'refuses a __proto__ key with 400: %s',
      async (body) => {
        const res = await postJson(body);
        expectError(res, 400, 'The JSON key "__proto__" is not allowed');
        expect(plantsService.create).not.toHaveBeenCalled();
      },
    );

    it('answers a text/plain body with 415', async () => {
      const res = await http()
        .post('/plants')
        .set(bearer(WRITER_TOKEN))
        .set('Content-Type', 'text/plain')
        .send('{"id":1,"name":"a"}');
      expectError(res, 415, new BodyNotJson().message);
      expect(plantsService.create).not.toHaveBeenCalled();
    });

    it('answers a form body with 415', async () => {
      const res = await http().post('/plants').set(bearer(WRITER_TOKEN)).type('form').send('id=1&name=a');
      expectError(res, 415, new BodyNotJson().message);
    });

    it('answers a charset other than UTF-8 it cannot read with 415', async () => {
      const res = await http()
        .post('/plants')
        .set(bearer(WRITER_TOKEN))
        .set('Content-Type', 'application/json; charset=x-klingon')
        .send('{"id":1,"name":"a"}');
      expectError(res, 415, 'Request body must be UTF-8 JSON, sent as is or gzip, deflate or br encoded');
    });

    it('reads a gzip-encoded body', async () => {
      const res = await http()
        .post('/plants')
        .set(bearer(WRITER_TOKEN))
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        // superagent would JSON-encode a Buffer sent as application/json; its typing only admits strings.
        .serialize((body: unknown) => body as string)
        .send(gzipSync('{"id":3,"name":"Zipped"}'));
      expect(res.status).toBe(200);
      expect(res.text).toBe(plantText({ id: 3, name: 'Zipped' }));
    });

    it('answers a body over the cap with 413', async () => {
      const res = await postJson(JSON.stringify({ id: 1, name: 'a', pad: 'x'.repeat(BODY_LIMIT_BYTES) }));
      expectError(res, 413, new BodyTooLarge().message);
      expect(plantsService.create).not.toHaveBeenCalled();
    });

    it('answers a duplicate id with 409', async () => {
      plantsService.create.mockRejectedValue(new PlantAlreadyExists(7n));
      const res = await postJson('{"id":7,"name":"Fern"}');
      expectError(res, 409, new PlantAlreadyExists(7n).message);
    });

    it('answers an unexpected failure with 500 and no detail', async () => {
      plantsService.create.mockRejectedValue(new Error('INSERT INTO plants failed: secret detail'));
      const res = await postJson('{"id":7,"name":"Fern"}');
      expectError(res, 500, new InternalError().message);
      expect(res.text).not.toContain('secret detail');
      expect(logError).toHaveBeenCalledTimes(1);
    });

    it('answers a database outage with 503', async () => {
      // What the data-access API throws for an outage.
      plantsService.create.mockRejectedValue(new DatabaseUnavailable({ code: 'PROTOCOL_CONNECTION_LOST' }));
      const res = await postJson('{"id":7,"name":"Fern"}');
      expectError(res, 503, new DatabaseUnavailable().message);
    });
  });

  describe('POST /plants with an Idempotency-Key', () => {
    const postKeyed = (key: string, body = '{"id":7,"name":"Fern"}') => postJson(body).set('Idempotency-Key', key);
    const held = { ref: { owner: 'alice', key: 'k-1' }, claim: 'c', route: {} };

    beforeEach(() => {
      // The service's transaction: the work runs within it and its answer is stored there.
      idempotencyService.succeed.mockImplementation((_held: unknown, work: () => Promise<unknown>) => work());
      idempotencyService.failed.mockResolvedValue(undefined);
    });

    it.each([
      ['empty', ''],
      ['with a space', 'a b'],
      ['with a non-ASCII character', 'clé'],
      ['of 256 characters', 'k'.repeat(256)],
    ])('refuses a key %s with 400, before anything is stored or created', async (_name, key) => {
      const res = await postKeyed(key);
      expectError(res, 400, /Idempotency-Key must be one value of 1 to 255 visible ASCII characters/);
      expect(idempotencyService.begin).not.toHaveBeenCalled();
      expect(plantsService.create).not.toHaveBeenCalled();
    });

    it('refuses two Idempotency-Key fields, which reach the app joined as "a, b", with 400', async () => {
      const res = await postJson('{"id":7,"name":"Fern"}').set('Idempotency-Key', 'a, b');
      expectError(res, 400, /Idempotency-Key must be one value/);
    });

    it('takes the key for the caller and creates within the transaction that stores the answer', async () => {
      idempotencyService.begin.mockResolvedValue({ kind: 'proceed', held });
      const res = await postKeyed('k'.repeat(255));
      expect(res.status).toBe(200);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
      expect(idempotencyService.begin).toHaveBeenCalledWith(
        { owner: 'alice', key: 'k'.repeat(255) },
        expect.stringMatching(/^[0-9a-f]{64}$/),
        { successStatus: 200, sealSuccess: false },
      );
      expect(idempotencyService.succeed).toHaveBeenCalledWith(held, expect.any(Function));
      expect(plantsService.create).toHaveBeenCalledWith('alice', expect.objectContaining({ id: 7n }));
    });

    it('fingerprints the same request alike whatever its layout, and another body differently', async () => {
      idempotencyService.begin.mockResolvedValue({ kind: 'proceed', held });
      await postKeyed('k', '{"id":7,"name":"Fern"}');
      await postKeyed('k', '{ "name" : "Fern", "id" : 7 }');
      await postKeyed('k', '{"id":8,"name":"Fern"}');
      const [first, second, third] = idempotencyService.begin.mock.calls.map((call) => call[1] as string);
      expect(second).toBe(first);
      expect(third).not.toBe(first);
    });

    it('hands a failure to the key (stored or released there) and answers it as usual', async () => {
      idempotencyService.begin.mockResolvedValue({ kind: 'proceed', held });
      const conflict = new PlantAlreadyExists(7n);
      plantsService.create.mockRejectedValue(conflict);
      const res = await postKeyed('k');
      expectError(res, 409, new PlantAlreadyExists(7n).message);
      expect(idempotencyService.failed).toHaveBeenCalledWith(held, conflict);
    });

    it('refuses an invalid body before taking the key: nothing is held or stored', async () => {
      const res = await postKeyed('k', '{"id":7}');
      expectError(res, 400, /name/);
      expect(idempotencyService.begin).not.toHaveBeenCalled();
      expect(idempotencyService.failed).not.toHaveBeenCalled();
      expect(plantsService.create).not.toHaveBeenCalled();
    });

    it('replays a stored success digit for digit, with Idempotent-Replayed, without calling the service', async () => {
      idempotencyService.begin.mockResolvedValue({
        kind: 'replay',
        statusCode: 200,
        body: plantText({ id: 9223372036854775807n, name: 'Fern' }),
      });
      const res = await postKeyed('k');
      expect(res.status).toBe(200);
      expect(res.text).toBe(plantText({ id: 9223372036854775807n, name: 'Fern' }));
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(plantsService.create).not.toHaveBeenCalled();
      expect(idempotencyService.succeed).not.toHaveBeenCalled();
    });

    it('replays a stored error as {error, message}, with Idempotent-Replayed', async () => {
      idempotencyService.begin.mockResolvedValue({
        kind: 'replay',
        statusCode: 409,
        body: JSON.stringify({ error: 409, message: new PlantAlreadyExists(7n).message }),
      });
      const res = await postKeyed('k');
      expectError(res, 409, new PlantAlreadyExists(7n).message);
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(idempotencyService.failed).not.toHaveBeenCalled();
    });

    it('passes on what taking the key refused (422, 409 in flight)', async () => {
      idempotencyService.begin.mockRejectedValue(new UnprocessableEntityException('used for a different request'));
      expectError(await postKeyed('k'), 422, 'used for a different request');
      expect(plantsService.create).not.toHaveBeenCalled();
    });
  });

  it('runs behind the same global providers as the service (the rate limit, a middleware, is tested e2e)', async () => {
    const res = await http().get('/plants').set(bearer(READER_TOKEN));
    expect(res.status).toBe(200);
    expect(tokensService.authenticate).toHaveBeenCalledWith(READER_TOKEN);
  });

  describe('authentication', () => {
    it('answers a request without a token with 401 and a bare challenge', async () => {
      const res = await http().get('/plants');
      expectError(res, 401, new AuthenticationRequired().message);
      expect(res.headers['www-authenticate']).toBe('Bearer realm="plant-store"');
      expect(tokensService.authenticate).not.toHaveBeenCalled();
      expect(plantsService.list).not.toHaveBeenCalled();
    });

    it('answers an outage during the token lookup with 503, not 401', async () => {
      tokensService.authenticate.mockRejectedValue(
        new DatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
      );
      const res = await http().get('/plants').set(bearer(WRITER_TOKEN));
      expectError(res, 503, new DatabaseUnavailable().message);
      expect(res.headers['www-authenticate']).toBeUndefined();
    });

    it.each([
      ['POST', '/plants', READER_TOKEN, 'plants:write'],
      ['DELETE', '/plants/5', READER_TOKEN, 'plants:write'],
      ['GET', '/plants', WRITE_ONLY_TOKEN, 'plants:read'],
    ])('answers %s %s with a token lacking %s... with 403 insufficient_scope', async (method, path, token, scope) => {
      const call = method === 'POST' ? http().post(path) : method === 'DELETE' ? http().delete(path) : http().get(path);
      const res = await call
        .set(bearer(token))
        .set('Content-Type', 'application/json')
        .send(method === 'POST' ? '{"id":1,"name":"a"}' : '');
      expectError(res, 403, new MissingScope([scope as Scope]).message);
      expect(res.headers['www-authenticate']).toBe(
        `Bearer realm="plant-store", error="insufficient_scope", scope="${scope}"`,
      );
      expect(plantsService.create).not.toHaveBeenCalled();
      expect(plantsService.remove).not.toHaveBeenCalled();
      expect(plantsService.list).not.toHaveBeenCalled();
    });
  });

  describe('GET /plants', () => {
    it('answers the page with a Link to the next one when the service returns nextAfter', async () => {
      plantsService.list.mockResolvedValue({
        plants: [examplePlant({ id: 1n, name: 'a' }), examplePlant({ id: 9223372036854775806n, name: 'b', tag: 't' })],
        limit: 2,
        nextAfter: 9223372036854775806n,
      });

      const res = await http().get('/plants?limit=2').set(bearer(READER_TOKEN));

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.text).toBe(
        `[${plantText({ id: 1n, name: 'a' })},${plantText({ id: 9223372036854775806n, name: 'b', tag: 't' })}]`,
      );
      expect(res.headers.link).toBe('<?limit=2&after=9223372036854775806>; rel="next"');
      expect(plantsService.list).toHaveBeenCalledWith('alice', expect.objectContaining({ limit: 2 }));
    });

    it('sends no Link header on the last page', async () => {
      plantsService.list.mockResolvedValue({ plants: [examplePlant({ id: 1n, name: 'a' })], limit: 1000 });
      const res = await http().get('/plants').set(bearer(READER_TOKEN));
      expect(res.status).toBe(200);
      expect(res.text).toBe(`[${plantText({ id: 1n, name: 'a' })}]`);
      expect(res.headers.link).toBeUndefined();
    });

    it('answers an empty list with []', async () => {
      const res = await http().get('/plants').set(bearer(READER_TOKEN));
      expect(res.status).toBe(200);
      expect(res.text).toBe('[]');
      expect(plantsService.list).toHaveBeenCalledWith('alice', {});
    });

    it('reads limit as a number and after as an exact bigint', async () => {
      const res = await http().get('/plants?limit=5&after=9223372036854775807').set(bearer(READER_TOKEN));
      expect(res.status).toBe(200);
      expect(plantsService.list).toHaveBeenCalledWith('alice', { limit: 5, after: 9223372036854775807n });
    });

    it('reads a negative cursor', async () => {
      await http().get('/plants?after=-9223372036854775808').set(bearer(READER_TOKEN)).expect(200);
      expect(plantsService.list).toHaveBeenCalledWith('alice', { after: -9223372036854775808n });
    });

    const LIMIT_MESSAGE = /^limit must be an integer from 1 to 2147483647$/;

    it.each([
      ['limit=0', LIMIT_MESSAGE],
      ['limit=-1', LIMIT_MESSAGE],
      ['limit=abc', LIMIT_MESSAGE],
      ['limit=1.5', LIMIT_MESSAGE],
      ['limit=2147483648', LIMIT_MESSAGE],
      ['limit=', LIMIT_MESSAGE],
      ['limit=1&limit=2', LIMIT_MESSAGE],
      ['after=abc', `after ${INT64_MESSAGE}`],
      ['after=1.5', `after ${INT64_MESSAGE}`],
      ['after=9223372036854775808', `after ${INT64_MESSAGE}`],
      ['after=%2B5', `after ${INT64_MESSAGE}`],
      ['sort=name', 'property sort should not exist'],
      ['toString=1', 'property toString should not exist'],
      ['valueOf=1&hasOwnProperty=1', 'property valueOf should not exist; property hasOwnProperty should not exist'],
    ])('answers ?%s with 400', async (query, message) => {
      const res = await http().get(`/plants?${query}`).set(bearer(READER_TOKEN));
      expectError(res, 400, message);
      expect(plantsService.list).not.toHaveBeenCalled();
    });
  });

  describe('DELETE /plants/:id', () => {
    it('deletes the plant of the caller and answers 204 without a body', async () => {
      const res = await http().delete('/plants/5').set(bearer(WRITER_TOKEN));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBeUndefined();
      expect(plantsService.remove).toHaveBeenCalledWith('alice', 5n);
    });

    it.each(['9223372036854775807', '-9223372036854775808'])('hands the service the exact id %s', async (id) => {
      await http().delete(`/plants/${id}`).set(bearer(WRITER_TOKEN)).expect(204);
      expect(plantsService.remove).toHaveBeenCalledWith('alice', BigInt(id));
    });

    it.each(['abc', '1.5', '1e3', '9223372036854775808', '%2B5', '%205', '0x10'])(
      'answers the id %p with 400',
      async (id) => {
        const res = await http().delete(`/plants/${id}`).set(bearer(WRITER_TOKEN));
        expectError(res, 400, `id ${INT64_MESSAGE}`);
        expect(plantsService.remove).not.toHaveBeenCalled();
      },
    );

    it('answers a plant that is not there with 404', async () => {
      plantsService.remove.mockRejectedValue(new NotFoundException(new PlantNotFound(5n).message));
      const res = await http().delete('/plants/5').set(bearer(WRITER_TOKEN));
      expectError(res, 404, new PlantNotFound(5n).message);
    });
  });

  describe('unknown routes', () => {
    it('answers 404 without echoing the path or the query string', async () => {
      const res = await http().get('/nope?access_token=pst_secret&x=1');
      expectError(res, 404, 'No route for GET at this path; the API is described at /docs');
      expect(res.body).toStrictEqual({
        error: 404,
        message: 'No route for GET at this path; the API is described at /docs',
      });
      expect(res.text).not.toContain('pst_secret');
    });

    it('answers an unknown method on a known path with 404', async () => {
      const res = await http()
        .put('/plants/5')
        .set(bearer(WRITER_TOKEN))
        .set('Content-Type', 'application/json')
        .send('{}');
      expectError(res, 404, 'No route for PUT at this path; the API is described at /docs');
    });
  });
});
