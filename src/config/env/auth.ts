import { SettingValues, integer, parsed, text } from '../settings';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An issuer is an https URL without query or fragment (OpenID Connect Discovery); http only on loopback. */
function issuerUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return undefined;
  const allowed = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  return allowed ? value : undefined;
}

/** Which bearer tokens are accepted: the service's own `pst_` tokens, and an identity provider's JWTs. */
export const authSettings = {
  TOKEN_CACHE_TTL_MS: integer({
    min: 0,
    max: 300_000,
    default: 5000,
    description:
      "How long an instance remembers a token lookup: a token revoked with the CLI or through another instance stops working within this time. The rate limit counts a token against its user only while its lookup is remembered (see [Rate limits](api.md#rate-limits)). `0`: no cache (each request with a token then reads it once, in authentication, and spends its address's budget as well as its user's).",
  }),
  OIDC_ISSUER: parsed(issuerUrl, {
    example: 'https://id.example.com/realms/plants',
    message:
      "$property must be the issuer's https URL, such as https://id.example.com/realms/plants (http only for localhost or 127.0.0.1), without query or fragment",
    description:
      'URL of an OpenID Connect issuer whose JWT access tokens are accepted beside `pst_` tokens (see [Identity provider](#identity-provider-openid-connect)); `https` except for `localhost`, `127.0.0.1` and `[::1]`. Unset: JWTs are refused like any unknown token.',
  }),
  OIDC_AUDIENCE: text({
    requiredWith: 'OIDC_ISSUER',
    example: 'https://plants.example.com',
    message: '$property is required with OIDC_ISSUER: the audience (resource indicator) of access tokens',
    description:
      'Required with `OIDC_ISSUER`: the `aud` an access token must carry (the resource indicator of this service at the provider).',
  }),
  OIDC_OWNER_CLAIM: text({
    pattern: /^[A-Za-z0-9_:./-]{1,100}$/,
    default: 'sub',
    message: '$property must be the name of a claim (letters, digits and _ : . / -), such as sub or org_id',
    description:
      'The claim whose value owns plants. `sub`: each client or user has its own store; a claim such as `org_id`: every member of one organisation shares one store.',
  }),
  OIDC_JWKS_CACHE_MS: integer({
    min: 1000,
    max: 86_400_000,
    default: 600_000,
    description:
      "How long the issuer's signing keys are used after they were fetched. Past it they are fetched again; if that fails, JWTs not verified before answer 503 until the provider is back.",
  }),
};

export function authConfig(env: SettingValues<typeof authSettings>) {
  return {
    auth: { tokenCacheTtlMs: env.TOKEN_CACHE_TTL_MS },
    /** Null unless OIDC_ISSUER is set. */
    oidc:
      env.OIDC_ISSUER === undefined
        ? null
        : {
            issuer: env.OIDC_ISSUER,
            // Required with the issuer, so set.
            audience: env.OIDC_AUDIENCE!,
            ownerClaim: env.OIDC_OWNER_CLAIM,
            jwksCacheMs: env.OIDC_JWKS_CACHE_MS,
          },
  };
}
