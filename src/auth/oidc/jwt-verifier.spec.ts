import { ServiceUnavailableException } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { exportJWK, generateKeyPair, JWTPayload, SignJWT } from 'jose';
import { OidcConfig } from '../../config/configuration';
import { SigningKeysUnavailable } from '../auth.errors';
import { JWT_CACHE_MARGIN_MS, JwtVerifier } from './jwt-verifier';

const ISSUER = 'https://id.example.com/realms/plants';
const JWKS_URI = 'https://id.example.com/realms/plants/certs';
const AUDIENCE = 'https://plants.example.com';
const CONFIG: OidcConfig = { issuer: ISSUER, audience: AUDIENCE, ownerClaim: 'sub', jwksCacheMs: 600_000 };

describe(JwtVerifier.name, () => {
  let keys: Awaited<ReturnType<typeof generateKeyPair>>;
  let jwks: unknown;
  let fetchMock: jest.SpyInstance;
  /** What the provider answers at the discovery URL; the JWKS URL always answers `jwks`. */
  let discovery: () => Promise<Response>;

  beforeAll(async () => {
    keys = await generateKeyPair('ES256', { extractable: true });
    jwks = { keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
  });

  beforeEach(() => {
    discovery = async () => Response.json({ issuer: ISSUER, jwks_uri: JWKS_URI, token_endpoint: `${ISSUER}/token` });
    fetchMock = jest.spyOn(globalThis, 'fetch').mockImplementation(async (input) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url === `${ISSUER}/.well-known/openid-configuration`) return discovery();
      if (url === JWKS_URI) return Response.json(jwks);
      throw new TypeError('fetch failed');
    });
  });
  afterEach(() => jest.restoreAllMocks());

  async function verifier(config: OidcConfig | null = CONFIG): Promise<JwtVerifier> {
    const moduleRef = await Test.createTestingModule({
      providers: [JwtVerifier, { provide: ConfigService, useValue: { get: () => config } }],
    }).compile();
    moduleRef.useLogger(false);
    return moduleRef.get(JwtVerifier);
  }

  const sign = (claims: JWTPayload = {}, typ = 'at+jwt') => {
    const now = Math.floor(Date.now() / 1000);
    const payload = { iss: ISSUER, aud: AUDIENCE, sub: 'alice', scope: 'plants:read', iat: now, exp: now + 300 };
    return new SignJWT({ ...payload, ...claims })
      .setProtectedHeader({ alg: 'ES256', typ, kid: 'k1' })
      .sign(keys.privateKey);
  };
  const fetches = () => fetchMock.mock.calls.length;

  describe('accepts', () => {
    it('takes a compact JWS only when OIDC_ISSUER is set, never a pst_ token', async () => {
      const on = await verifier();
      const off = await verifier(null);
      expect(on.accepts('aaa.bbb.ccc')).toBe(true);
      expect(on.accepts(`pst_${'A'.repeat(43)}`)).toBe(false);
      expect(on.accepts('aaa.bbb.')).toBe(false);
      expect(on.accepts('aaa.bbb')).toBe(false);
      expect(off.accepts('aaa.bbb.ccc')).toBe(false);
      expect(off.cachedPrincipal('aaa.bbb.ccc')).toBeNull();
    });
  });

  describe('authenticate', () => {
    it('gives the owner claim and scopes of a valid token, fetching the metadata and keys once', async () => {
      const jwts = await verifier();
      await expect(jwts.authenticate(await sign())).resolves.toMatchObject({
        subject: 'alice',
        scopes: ['plants:read'],
      });
      await expect(jwts.authenticate(await sign({ sub: 'bob' }))).resolves.toMatchObject({ subject: 'bob' });
      expect(fetches()).toBe(2);
    });

    it('reads scopes from scp when there is no scope, and accepts typ JWT', async () => {
      const jwts = await verifier();
      const token = await sign({ scope: undefined, scp: ['plants:read', 'plants:write'] }, 'JWT');
      await expect(jwts.authenticate(token)).resolves.toMatchObject({ scopes: ['plants:read', 'plants:write'] });
    });

    it('uses OIDC_OWNER_CLAIM as the owner, and refuses a token without it', async () => {
      const jwts = await verifier({ ...CONFIG, ownerClaim: 'org_id' });
      await expect(jwts.authenticate(await sign({ org_id: 'org-7' }))).resolves.toMatchObject({ subject: 'org-7' });
      await expect(jwts.authenticate(await sign())).resolves.toBeNull();
      await expect(jwts.authenticate(await sign({ org_id: ['org-7'] }))).resolves.toBeNull();
      await expect(jwts.authenticate(await sign({ org_id: 'has space' }))).resolves.toBeNull();
    });

    it.each([
      ['another issuer', { iss: 'https://evil.example.com' }, 'at+jwt'],
      ['another audience', { aud: 'https://other.example.com' }, 'at+jwt'],
      ['an expired token', { exp: Math.floor(Date.now() / 1000) - 60 }, 'at+jwt'],
      ['no exp', { exp: undefined }, 'at+jwt'],
      ['an ID token type', {}, 'id_token+jwt'],
    ])('refuses %s with null', async (_label, claims, typ) => {
      const jwts = await verifier();
      await expect(jwts.authenticate(await sign(claims, typ))).resolves.toBeNull();
    });

    it('remembers a verified token until shortly before its exp, with no further work', async () => {
      const jwts = await verifier();
      const exp = Math.floor(Date.now() / 1000) + 120;
      const token = await sign({ exp });
      const principal = await jwts.authenticate(token);
      expect(jwts.cachedPrincipal(token)).toBe(principal);

      discovery = async () => new Response('down', { status: 503 });
      await expect(jwts.authenticate(token)).resolves.toBe(principal);
      jest.spyOn(Date, 'now').mockReturnValue(exp * 1000 - JWT_CACHE_MARGIN_MS);
      expect(jwts.cachedPrincipal(token)).toBeNull();
    });

    it('shares one verification between concurrent requests with one token', async () => {
      const jwts = await verifier();
      const token = await sign();
      const [a, b] = await Promise.all([jwts.authenticate(token), jwts.authenticate(token)]);
      expect(a).toBe(b);
      expect(fetches()).toBe(2);
    });

    it('answers 503 when the provider cannot be reached, and retries on the next token', async () => {
      const jwts = await verifier();
      discovery = () => Promise.reject(new TypeError('fetch failed'));
      const failure = jwts.authenticate(await sign());
      await expect(failure).rejects.toBeInstanceOf(ServiceUnavailableException);
      await expect(failure).rejects.toThrow(new SigningKeysUnavailable().message);

      discovery = async () => Response.json({ issuer: ISSUER, jwks_uri: JWKS_URI });
      await expect(jwts.authenticate(await sign())).resolves.toMatchObject({ subject: 'alice' });
    });

    it('answers 503 when the discovery document names another issuer', async () => {
      const jwts = await verifier();
      discovery = async () => Response.json({ issuer: 'https://evil.example.com', jwks_uri: JWKS_URI });
      await expect(jwts.authenticate(await sign())).rejects.toBeInstanceOf(ServiceUnavailableException);
    });

    it('answers 503 when an https issuer names a plain http jwks_uri', async () => {
      const jwts = await verifier();
      discovery = async () => Response.json({ issuer: ISSUER, jwks_uri: JWKS_URI.replace('https:', 'http:') });
      await expect(jwts.authenticate(await sign())).rejects.toBeInstanceOf(ServiceUnavailableException);
    });

    it('answers 503 when the keys cannot be fetched', async () => {
      const jwts = await verifier();
      jwks = 'not a key set';
      try {
        await expect(jwts.authenticate(await sign())).rejects.toBeInstanceOf(ServiceUnavailableException);
      } finally {
        jwks = { keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
      }
    });
  });

  describe('tokenEndpoint', () => {
    it('is the one in the discovery document, or undefined when it cannot be had', async () => {
      await expect((await verifier()).tokenEndpoint()).resolves.toBe(`${ISSUER}/token`);
      await expect((await verifier(null)).tokenEndpoint()).resolves.toBeUndefined();
      discovery = async () => new Response('down', { status: 500 });
      await expect((await verifier()).tokenEndpoint()).resolves.toBeUndefined();
    });
  });
});
