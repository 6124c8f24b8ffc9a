import { createHmac } from 'node:crypto';
import { JWTPayload, base64url, decodeJwt } from 'jose';
import request from 'supertest';
import { JWT_REFUSED } from '../src/auth/bearer-auth.guard';
import { SigningKeysUnavailable } from '../src/auth/auth.errors';
import {
  SigningKey,
  TEST_AUDIENCE,
  TestClient,
  TestProvider,
  signedToken,
  signingKey,
  startTestProvider,
} from './utils/oidc-provider';
import { TestApp, bearer, expectErrorBody, startTestApp } from './utils/test-app';
import { freePort } from './utils/service-process';
import { waitFor } from './utils/wait-for';
import { expectedPlant } from './utils/bodies';

const INVALID = `Bearer realm="plant-store", error="invalid_token", error_description="${JWT_REFUSED}"`;
const RW = 'plants:read plants:write';

const client = (client_id: string, scope: string, org: string): TestClient => ({
  client_id,
  client_secret: `${client_id}-secret-${'x'.repeat(32)}`,
  scope,
  org,
});
const CLIENTS = [
  client('writer', RW, 'org-a'),
  client('reader', 'plants:read', 'org-a'),
  client('colleague', RW, 'org-a'),
  client('outsider', RW, 'org-b'),
];

const oidcEnv = (provider: TestProvider, extra: Record<string, string> = {}) => ({
  OIDC_ISSUER: provider.issuer,
  OIDC_AUDIENCE: TEST_AUDIENCE,
  ...extra,
});

const postPlant = (t: TestApp, token: string, id: number, name = `plant ${id}`) =>
  t.http().post('/plants').set(bearer(token)).set('Content-Type', 'application/json').send({ id, name });

/**
 * The service as an OAuth 2.0 resource server of a real OpenID Provider (oidc-provider, in its own
 * process): client-credentials access tokens, JWTs for the service's audience.
 */
describe('OpenID Connect access tokens', () => {
  let key: SigningKey;
  let provider: TestProvider;
  let t: TestApp;

  beforeAll(async () => {
    key = await signingKey('key-1');
    provider = await startTestProvider({ keys: [key], clients: CLIENTS });
    t = await startTestApp('sqlite', oidcEnv(provider));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await provider?.stop();
  });
  beforeEach(() => t.reset());

  /** A token signed with the provider's own key, with claims and header chosen by the test. */
  const forge = (claims: JWTPayload, header: Record<string, unknown> = {}, signWith = key) =>
    signedToken(signWith, provider.issuer, claims, header);

  it('creates, lists and deletes plants with client-credentials tokens, owned by the client (sub)', async () => {
    const token = await provider.token('writer', RW);
    expect(decodeJwt(token)).toMatchObject({ sub: 'writer', aud: TEST_AUDIENCE, iss: provider.issuer });

    expect((await postPlant(t, token, 1, 'Monstera')).status).toBe(200);
    const list = await t.http().get('/plants').set(bearer(token));
    expect(list.status).toBe(200);
    expect(list.body).toEqual([expectedPlant({ id: 1, name: 'Monstera' })]);
    const owners = await t.dataSource.query('SELECT owner FROM plants');
    expect(owners).toEqual([{ owner: 'writer' }]);

    expect((await t.http().delete('/plants/1').set(bearer(token))).status).toBe(204);
    expect((await t.http().get('/plants').set(bearer(token))).body).toEqual([]);
  });

  it('keeps pst_ tokens working beside JWTs', async () => {
    const pst = await t.token({ subject: 'alice' });
    expect((await postPlant(t, pst, 2)).status).toBe(200);
    expect((await t.http().get('/plants').set(bearer(pst))).body).toEqual([expectedPlant({ id: 2, name: 'plant 2' })]);
    // Another owner: the JWT's client sees none of alice's plants.
    expect(
      (
        await t
          .http()
          .get('/plants')
          .set(bearer(await provider.token('writer', RW)))
      ).body,
    ).toEqual([]);
  });

  it('answers a read-only client 403 insufficient_scope on writes, 200 on the list', async () => {
    const token = await provider.token('reader', 'plants:read');
    expect((await t.http().get('/plants').set(bearer(token))).status).toBe(200);
    for (const res of [await postPlant(t, token, 3), await t.http().delete('/plants/3').set(bearer(token))]) {
      expectErrorBody(res, 403);
      expect(res.headers['www-authenticate']).toBe(
        'Bearer realm="plant-store", error="insufficient_scope", scope="plants:write"',
      );
    }
    expect(Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM plants'))[0].n)).toBe(0);
  });

  it('takes scopes from an scp array, and a typ of JWT', async () => {
    const token = await forge({ scope: undefined, scp: ['plants:read'] }, { typ: 'JWT' });
    expect((await t.http().get('/plants').set(bearer(token))).status).toBe(200);
    expectErrorBody(await postPlant(t, token, 4), 403);
  });

  describe('refuses with 401 invalid_token', () => {
    let otherProvider: TestProvider;
    beforeAll(async () => {
      // Another provider, whose key even has the same kid.
      otherProvider = await startTestProvider({ keys: [await signingKey('key-1')], clients: CLIENTS });
    }, 30_000);
    afterAll(() => otherProvider?.stop());

    const now = () => Math.floor(Date.now() / 1000);
    const cases: [string, () => Promise<string>][] = [
      ['an expired token', () => forge({ iat: now() - 600, exp: now() - 120 })],
      ['a token not yet valid', () => forge({ nbf: now() + 120 })],
      ['a token of another issuer', () => forge({ iss: 'http://127.0.0.1:9/other' })],
      ['a token for another audience', () => forge({ aud: 'https://other.test' })],
      [
        'a token whose payload was changed',
        async () => {
          const [header, payload, signature] = (await provider.token('writer', RW)).split('.');
          const changed = { ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'someone-else' };
          return [header, base64url.encode(JSON.stringify(changed)), signature].join('.');
        },
      ],
      [
        'an unsigned token (alg none)',
        async () => {
          const [, payload] = (await forge({})).split('.');
          return `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }))}.${payload}.`;
        },
      ],
      [
        'an alg none token with a signature',
        async () => {
          const [, payload] = (await forge({})).split('.');
          return `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }))}.${payload}.c2lnbmF0dXJl`;
        },
      ],
      [
        'an HS256 token signed with the public key as the secret',
        async () => {
          const [, payload] = (await forge({})).split('.');
          const header = base64url.encode(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: 'key-1' }));
          const signature = createHmac('sha256', JSON.stringify(key.publicJwk))
            .update(`${header}.${payload}`)
            .digest('base64url');
          return `${header}.${payload}.${signature}`;
        },
      ],
      ['a token whose kid is not in the JWKS', async () => forge({}, {}, await signingKey('unknown-kid'))],
      ['a token of another provider', () => otherProvider.token('writer', RW)],
      ['a token without a typ', () => forge({}, { typ: undefined })],
      ['a token of another type', () => forge({}, { typ: 'id_token+jwt' })],
      ['a token without the owner claim', () => forge({ sub: undefined })],
    ];

    it.each(cases)('%s', async (_label, make) => {
      const token = await make();
      const res = await t.http().get('/plants').set(bearer(token));
      expectErrorBody(res, 401);
      // An unsigned JWT (empty third part) is not even shaped like one: refused as any unknown token.
      expect(res.headers['www-authenticate']).toBe(
        token.endsWith('.') ? 'Bearer realm="plant-store", error="invalid_token"' : INVALID,
      );
      expect(res.body.message).toBe('The access token is invalid, expired or revoked');
    });
  });
});

describe('OIDC_OWNER_CLAIM: one store per organisation', () => {
  let provider: TestProvider;
  let t: TestApp;

  beforeAll(async () => {
    provider = await startTestProvider({ keys: [await signingKey('key-1')], clients: CLIENTS });
    t = await startTestApp('sqlite', oidcEnv(provider, { OIDC_OWNER_CLAIM: 'org_id' }));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await provider?.stop();
  });

  it('lets two clients of one organisation share plants, and shows another organisation none', async () => {
    const writer = await provider.token('writer', RW);
    const colleague = await provider.token('colleague', RW);
    const outsider = await provider.token('outsider', RW);

    expect((await postPlant(t, writer, 10, 'Shared fern')).status).toBe(200);
    expect((await t.http().get('/plants').set(bearer(colleague))).body).toEqual([
      expectedPlant({ id: 10, name: 'Shared fern' }),
    ]);
    expect((await t.http().get('/plants').set(bearer(outsider))).body).toEqual([]);
    expect((await t.http().delete('/plants/10').set(bearer(outsider))).status).toBe(404);

    expect((await t.http().delete('/plants/10').set(bearer(colleague))).status).toBe(204);
    expect((await t.http().get('/plants').set(bearer(writer))).body).toEqual([]);
  });
});

describe('Key rotation at the provider', () => {
  let provider: TestProvider;
  let t: TestApp;
  let oldKey: SigningKey;

  beforeAll(async () => {
    oldKey = await signingKey('old');
    provider = await startTestProvider({ keys: [oldKey], clients: CLIENTS });
    t = await startTestApp('sqlite', oidcEnv(provider));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await provider?.stop();
  });

  it('accepts tokens signed with the new key without a restart, and old tokens until they expire', async () => {
    const oldToken = await provider.token('writer', RW);
    expect((await t.http().get('/plants').set(bearer(oldToken))).status).toBe(200);

    // The provider restarts signing with a new key, still publishing the old one.
    const port = provider.port;
    await provider.stop();
    provider = await startTestProvider({ keys: [await signingKey('new'), oldKey], clients: CLIENTS, port });
    const newToken = await provider.token('writer', RW);
    expect(JSON.parse(Buffer.from(newToken.split('.')[0], 'base64url').toString()).kid).toBe('new');

    // The unknown kid refetches the JWKS, at most once per cooldown (10 s) after the last fetch.
    let status = 0;
    await waitFor(
      async () => {
        status = (await t.http().get('/plants').set(bearer(newToken))).status;
        expect([200, 401]).toContain(status);
        return status === 200;
      },
      { timeoutMs: 20_000, intervalMs: 250, what: 'the new key accepted' },
    );
    expect((await t.http().get('/plants').set(bearer(oldToken))).status).toBe(200);
    // A token of the old key that has expired is refused like any other.
    const now = Math.floor(Date.now() / 1000);
    const expired = await signedToken(oldKey, provider.issuer, { iat: now - 600, exp: now - 60 });
    expectErrorBody(await t.http().get('/plants').set(bearer(expired)), 401);
  }, 40_000);
});

describe('The provider stopped', () => {
  let provider: TestProvider;
  let t: TestApp;
  let key: SigningKey;

  beforeAll(async () => {
    key = await signingKey('key-1');
    provider = await startTestProvider({ keys: [key], clients: CLIENTS });
    // Keys are used for one second after they were fetched.
    t = await startTestApp('sqlite', oidcEnv(provider, { OIDC_JWKS_CACHE_MS: '1000' }));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await provider?.stop();
  });

  it('leaves pst_ tokens working, answers new JWTs 503 once the cached keys expire, and recovers', async () => {
    const pst = await t.token({ subject: 'alice' });
    const used = await provider.token('writer', RW);
    // Tokens this instance has never seen: each needs the keys.
    const fresh = () => signedToken(key, provider.issuer);
    expect((await t.http().get('/plants').set(bearer(used))).status).toBe(200);

    const port = provider.port;
    await provider.stop();

    expect((await t.http().get('/plants').set(bearer(pst))).status).toBe(200);
    // A token already verified stays valid until its exp: nothing new needs checking.
    expect((await t.http().get('/plants').set(bearer(used))).status).toBe(200);
    let res: request.Response | undefined;
    await waitFor(
      async () => {
        res = await t
          .http()
          .get('/plants')
          .set(bearer(await fresh()));
        expect([200, 503]).toContain(res.status);
        return res.status === 503;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'a 503 once the keys are stale' },
    );
    expectErrorBody(res!, 503);
    expect(res!.body.message).toBe(new SigningKeysUnavailable().message);
    expect(res!.headers['www-authenticate']).toBeUndefined();
    expect((await t.http().get('/plants').set(bearer(pst))).status).toBe(200);

    provider = await startTestProvider({ keys: [key], clients: CLIENTS, port });
    expect(
      (
        await t
          .http()
          .get('/plants')
          .set(bearer(await fresh()))
      ).status,
    ).toBe(200);
  }, 40_000);
});

describe('A provider unreachable from the start', () => {
  let t: TestApp;
  let issuer: string;

  beforeAll(async () => {
    // Nothing listens there.
    issuer = `http://127.0.0.1:${await freePort()}`;
    t = await startTestApp('sqlite', { OIDC_ISSUER: issuer, OIDC_AUDIENCE: TEST_AUDIENCE });
  }, 60_000);
  afterAll(() => t?.close());

  it('starts, is ready, serves pst_ tokens and answers JWTs 503', async () => {
    expect((await t.http().get('/health/ready')).status).toBe(200);
    const pst = await t.token({ subject: 'alice' });
    expect((await t.http().get('/plants').set(bearer(pst))).status).toBe(200);
    const res = await t
      .http()
      .get('/plants')
      .set(bearer(await signedToken(await signingKey('any'), issuer)));
    expectErrorBody(res, 503);
    expect(res.body.message).toBe(new SigningKeysUnavailable().message);
  });
});
