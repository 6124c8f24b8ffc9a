import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { createRemoteJWKSet, errors, JWTPayload, jwtVerify } from 'jose';
import { redactUrl } from '../../common/http/redact-tokens';
import { AppConfig, OidcConfig } from '../../config/configuration';
import { SigningKeysUnavailable } from '../auth.errors';
import { Principal } from '../principal';
import { SUBJECT_PATTERN } from '../tokens.service';
import { JWT_CACHE_MAX_ENTRIES } from '../auth.limits';

/** Three base64url parts: a compact JWS. A `pst_` token never has a dot. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Asymmetric only: `none` and HS* (a secret shared with whoever holds the JWKS) are never accepted. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** RFC 9068 access tokens say `at+jwt`; many providers still say `JWT`. */
const ACCEPTED_TYPES = new Set(['jwt', 'at+jwt']);

/** Seconds of clock difference with the provider tolerated on `exp`, `nbf` and `iat`. */
export const JWT_CLOCK_TOLERANCE_S = 30;

/** An unknown `kid` fetches the JWKS again at most this often, so made-up kids cannot hammer the provider. */
export const JWKS_COOLDOWN_MS = 10_000;

/** Fetches of the discovery document and of the JWKS give up after this long. */
export const PROVIDER_TIMEOUT_MS = 5_000;

/** A verified token is remembered until this long before its `exp`. */
export const JWT_CACHE_MARGIN_MS = 1_000;

/** Codes of jose errors that say the keys could not be had, not that the token is bad. */
const UNAVAILABLE_CODES = new Set([errors.JOSEError.code, errors.JWKSTimeout.code, errors.JWKSInvalid.code]);

interface ProviderMetadata {
  issuer: string;
  jwks_uri: string;
  token_endpoint?: string;
}

interface Verified {
  principal: Principal;
  /** Epoch ms after which the token must be verified again. */
  until: number;
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * Access tokens from the one configured OpenID Connect issuer (OIDC_ISSUER): compact JWS checked
 * against the issuer's JWKS, with its issuer, audience and lifetime. The provider's metadata and
 * keys are fetched on first use, never at start-up, so an unreachable provider delays nothing and
 * touches no `pst_` token.
 */
@Injectable()
export class JwtVerifier {
  private readonly logger = new Logger(JwtVerifier.name);
  private readonly config: OidcConfig | null;
  private readonly verified = new Map<string, Verified>();
  private readonly pending = new Map<string, Promise<Principal | null>>();
  private metadata: Promise<ProviderMetadata> | undefined;
  private keys: KeySet | undefined;

  constructor(config: ConfigService<AppConfig, true>) {
    this.config = config.get('oidc', { infer: true });
  }

  /** Whether this token is one for this verifier: OIDC is configured and it has the shape of a JWT. */
  accepts(token: string): boolean {
    return this.config !== null && COMPACT_JWS.test(token);
  }

  /**
   * The caller behind a JWT, or null when it is not valid here. Throws SigningKeysUnavailable (503)
   * when it cannot be checked because the provider's keys cannot be fetched.
   */
  authenticate(token: string): Promise<Principal | null> {
    const cached = this.cachedPrincipal(token);
    if (cached) return Promise.resolve(cached);
    let verification = this.pending.get(token);
    if (!verification) {
      const settle = () => this.pending.delete(token);
      verification = this.verify(token).finally(settle);
      this.pending.set(token, verification);
    }
    return verification;
  }

  /** The caller behind a JWT verified before and not about to expire, without any work; else null. */
  cachedPrincipal(token: string): Principal | null {
    if (this.config === null) return null;
    const hit = this.verified.get(token);
    if (!hit) return null;
    if (hit.until > Date.now()) return hit.principal;
    this.verified.delete(token);
    return null;
  }

  /** The provider's token endpoint (for the OpenAPI document), or undefined when it cannot be had. */
  async tokenEndpoint(): Promise<string | undefined> {
    if (this.config === null) return undefined;
    try {
      return (await this.providerMetadata()).token_endpoint;
    } catch {
      return undefined;
    }
  }

  private async verify(token: string): Promise<Principal | null> {
    const config = this.config!;
    let payload: JWTPayload;
    try {
      const keys = await this.keySet();
      const result = await jwtVerify(token, keys, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: JWT_ALGORITHMS,
        clockTolerance: JWT_CLOCK_TOLERANCE_S,
        requiredClaims: ['exp'],
      });
      const type = result.protectedHeader.typ?.toLowerCase().replace(/^application\//, '');
      if (type === undefined || !ACCEPTED_TYPES.has(type)) return null;
      payload = result.payload;
    } catch (error) {
      if (error instanceof SigningKeysUnavailable) throw error;
      if (error instanceof errors.JOSEError && !UNAVAILABLE_CODES.has(error.code)) return null;
      this.logger.warn(`Signing keys of ${redactUrl(config.issuer)} unavailable: ${describe(error)}`);
      throw new SigningKeysUnavailable();
    }

    const owner = payload[config.ownerClaim];
    if (typeof owner !== 'string' || !SUBJECT_PATTERN.test(owner)) return null;
    const principal: Principal = {
      subject: owner,
      scopes: scopesOf(payload),
      kind: 'jwt',
      tokenId: typeof payload.jti === 'string' ? `jwt:${payload.jti}` : 'jwt',
    };
    this.remember(token, principal, payload.exp! * 1000 - JWT_CACHE_MARGIN_MS);
    return principal;
  }

  private remember(token: string, principal: Principal, until: number): void {
    if (until <= Date.now()) return;
    if (this.verified.size >= JWT_CACHE_MAX_ENTRIES) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { principal, until });
  }

  /** The JWKS of the issuer, built once its metadata is known; jose caches the keys and refetches them. */
  private async keySet(): Promise<KeySet> {
    if (this.keys) return this.keys;
    const { jwks_uri } = await this.providerMetadata();
    this.keys ??= createRemoteJWKSet(new URL(jwks_uri), {
      cacheMaxAge: this.config!.jwksCacheMs,
      cooldownDuration: JWKS_COOLDOWN_MS,
      timeoutDuration: PROVIDER_TIMEOUT_MS,
    });
    return this.keys;
  }

  /** OpenID Connect Discovery, fetched once it succeeds; a failure is not remembered, the next call retries. */
  private providerMetadata(): Promise<ProviderMetadata> {
    this.metadata ??= this.fetchMetadata().catch((error: unknown) => {
      this.metadata = undefined;
      throw error;
    });
    return this.metadata;
  }

  private async fetchMetadata(): Promise<ProviderMetadata> {
    const issuer = this.config!.issuer;
    const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    let body: Partial<ProviderMetadata>;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS), redirect: 'error' });
      if (res.status !== 200) throw new Error(`${redactUrl(url)} answered ${res.status}`);
      body = (await res.json()) as Partial<ProviderMetadata>;
    } catch (error) {
      this.logger.warn(`Discovery of ${redactUrl(issuer)} failed: ${describe(error)}`);
      throw new SigningKeysUnavailable();
    }
    // OpenID Connect Discovery 1.0, section 4.3: the document must name the issuer it was fetched for.
    // Keys come over https whenever the issuer is https (plain http is allowed for loopback issuers only).
    const secure = new URL(issuer).protocol === 'http:' || URL.parse(body.jwks_uri ?? '')?.protocol === 'https:';
    if (body.issuer !== issuer || typeof body.jwks_uri !== 'string' || !URL.canParse(body.jwks_uri) || !secure) {
      this.logger.error(
        `Discovery of ${redactUrl(issuer)}: the document names another issuer or no valid https jwks_uri`,
      );
      throw new SigningKeysUnavailable();
    }
    return body as ProviderMetadata;
  }
}

/** `scope` (space-separated, RFC 9068 / RFC 8693) or `scp` (an array, as Entra ID and Okta write it). */
function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === 'string') return payload.scope.split(' ').filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((scope): scope is string => typeof scope === 'string');
  if (typeof payload.scp === 'string') return payload.scp.split(' ').filter(Boolean);
  return [];
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
