// An OpenID Provider for the e2e tests: panva's oidc-provider, which is ESM-only, so it runs in its
// own Node process (see oidc-provider.ts), never inside Jest. Its whole configuration comes as JSON
// in OIDC_TEST_PROVIDER; it prints one line, `listening <port>`, once it answers.
import { createServer } from 'node:http';
import process from 'node:process';
import Provider, { errors } from 'oidc-provider';

const { port, jwks, audience, clients, accessTokenTtlS } = JSON.parse(process.env.OIDC_TEST_PROVIDER);
const issuer = `http://127.0.0.1:${port}`;
const SCOPES = 'plants:read plants:write';
const orgOf = new Map(clients.map((client) => [client.client_id, client.org]));

const provider = new Provider(issuer, {
  clients: clients.map(({ client_id, client_secret, scope }) => ({
    client_id,
    client_secret,
    scope,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
  })),
  jwks,
  scopes: SCOPES.split(' '),
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => audience,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        if (resource !== audience) throw new errors.InvalidTarget();
        return {
          scope: SCOPES,
          audience,
          accessTokenTTL: accessTokenTtlS,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: jwks.keys[0].alg ?? 'RS256' } },
        };
      },
    },
  },
  // The organisation of the client, for OIDC_OWNER_CLAIM=org_id.
  extraTokenClaims: (_ctx, token) => (orgOf.get(token.clientId) ? { org_id: orgOf.get(token.clientId) } : undefined),
  // Swagger UI fetches tokens from the service's own origin.
  clientBasedCORS: () => true,
  ttl: { ClientCredentials: accessTokenTtlS },
});
provider.on('server_error', (_ctx, error) => process.stderr.write(`server_error ${error.stack}\n`));

const server = createServer(provider.callback());
server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
// Gone at once, open connections included, as a crashed or unplugged provider would be.
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
