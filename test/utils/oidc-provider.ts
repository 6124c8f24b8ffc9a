import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { CryptoKey, exportJWK, generateKeyPair, JWK, JWTPayload, SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { freePort } from './service-process';

/** The resource indicator of the service in the tests: the `aud` of its access tokens. */
export const TEST_AUDIENCE = 'https://plants.test';

export interface TestClient {
  client_id: string;
  client_secret: string;
  /** Scopes the client may ask for. */
  scope: string;
  /** Its organisation: the `org_id` claim of its tokens. */
  org?: string;
}

export interface SigningKey {
  /** The private JWK (with `kid` and `alg`), as the provider holds it. */
  privateJwk: JWK;
  publicJwk: JWK;
  privateKey: CryptoKey;
}

export interface TestProvider {
  issuer: string;
  port: number;
  /** A client-credentials access token for one of the clients. */
  token: (clientId: string, scope: string) => Promise<string>;
  /** Ends the process and waits for it. */
  stop: () => Promise<void>;
  output: () => string;
}

export interface ProviderOptions {
  keys: SigningKey[];
  clients: TestClient[];
  /** The port to listen on (the same one again after a stop, as a restarted provider would); free by default. */
  port?: number;
  accessTokenTtlS?: number;
}

const SCRIPT = join(__dirname, 'openid-provider-process.mjs');
const START_TIMEOUT_MS = 20_000;

export async function signingKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { privateJwk, publicJwk, privateKey };
}

/**
 * An access token signed by the test itself with one of the provider's keys: valid for `issuer`
 * and TEST_AUDIENCE for five minutes, unless `claims` or `header` say otherwise (an undefined value
 * removes a claim or header).
 */
export function signedToken(
  key: SigningKey,
  issuer: string,
  claims: JWTPayload = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    scope: 'plants:read plants:write',
    iss: issuer,
    aud: TEST_AUDIENCE,
    sub: 'forged',
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
    ...claims,
  };
  return new SignJWT(JSON.parse(JSON.stringify(payload)) as JWTPayload)
    .setProtectedHeader(
      JSON.parse(JSON.stringify({ alg: key.privateJwk.alg, typ: 'at+jwt', kid: key.privateJwk.kid, ...header })),
    )
    .sign(key.privateKey);
}

/**
 * panva's oidc-provider (a certified OpenID Provider) in a child process on 127.0.0.1, issuing
 * client-credentials access tokens as JWTs for TEST_AUDIENCE, signed with the first key of `keys`
 * and publishing all of them in its JWKS.
 */
export async function startTestProvider(options: ProviderOptions): Promise<TestProvider> {
  const port = options.port ?? (await freePort());
  const config = {
    port,
    jwks: { keys: options.keys.map((key) => key.privateJwk) },
    audience: TEST_AUDIENCE,
    clients: options.clients,
    accessTokenTtlS: options.accessTokenTtlS ?? 600,
  };
  const child: ChildProcess = spawn(process.execPath, [SCRIPT], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', OIDC_TEST_PROVIDER: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`The OpenID Provider did not start within ${START_TIMEOUT_MS} ms:\n${text}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('listening ')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`The OpenID Provider exited with code ${code}:\n${text}`));
    });
  });

  const issuer = `http://127.0.0.1:${port}`;
  const secrets = new Map(options.clients.map((client) => [client.client_id, client.client_secret]));
  return {
    issuer,
    port,
    output: () => text,
    token: async (clientId, scope) => {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${clientId}:${secrets.get(clientId)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
      });
      const body = (await res.json()) as { access_token?: string };
      if (res.status !== 200 || !body.access_token) {
        throw new Error(`The provider refused a token: ${res.status} ${JSON.stringify(body)}`);
      }
      return body.access_token;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
