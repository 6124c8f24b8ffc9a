import { Agent as HttpAgent, ClientRequest, IncomingMessage, request as httpRequest, RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { CheckedAddress } from './address-policy';
import { MAX_RESPONSE_BODY_BYTES } from '../webhooks.limits';

export const USER_AGENT = 'plant-store-webhooks/1';

/**
 * One delivery attempt: `status` when a response arrived (whatever the status), otherwise
 * `error`, a short text safe to show to the subscriber.
 */
export interface AttemptResult {
  status?: number;
  error?: string;
  durationMs: number;
}

export interface WebhookRequest {
  url: URL;
  /** From resolveWebhookAddress: the connection goes there and nowhere else. */
  checked: CheckedAddress;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host unreachable',
  ENETDOWN: 'network unreachable',
};

/** OpenSSL's certificate verification failures, as Node names them in `code`. */
const CERTIFICATE_ERRORS = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

/** Only the error code is shown: messages carry addresses and ports of our side. */
function describeFailure(error: unknown): string {
  const fields = typeof error === 'object' && error !== null ? (error as { code?: unknown; message?: unknown }) : {};
  const code = typeof fields.code === 'string' && /^[A-Z0-9_]{1,64}$/.test(fields.code) ? fields.code : undefined;
  if (code === undefined) return 'connection failed';
  // Node's name for a connection closed before any response.
  if (code === 'ECONNRESET' && fields.message === 'socket hang up') return 'connection closed without a response';
  if (code in NETWORK_ERRORS) return NETWORK_ERRORS[code];
  if (/^ERR_(TLS|SSL)_/.test(code) || code === 'EPROTO' || CERTIFICATE_ERRORS.has(code)) return `TLS error: ${code}`;
  if (code.startsWith('HPE_')) return 'invalid HTTP response';
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') return 'invalid request header';
  return `connection failed: ${code}`;
}

/**
 * Connections to receivers are kept open between attempts: a busy subscription is sent an event
 * every few milliseconds, and a new TCP (and TLS) handshake for each would cost more than the
 * request. A pooled connection is keyed by the address it was opened to (the checked address, never
 * the host name) and, for TLS, by the server name its certificate was checked against, so an
 * attempt reuses one only when it would have connected to that same address itself. An idle
 * connection is closed after IDLE_CONNECTION_MS, below the keep-alive timeouts servers commonly
 * use (Node's 5 s, nginx's 75 s), so the receiver rarely closes one just as it is reused.
 */
export const IDLE_CONNECTION_MS = 4000;
const AGENT_OPTIONS = { keepAlive: true, timeout: IDLE_CONNECTION_MS, scheduling: 'lifo' } as const;
const agents = { http: new HttpAgent(AGENT_OPTIONS), https: new HttpsAgent(AGENT_OPTIONS) };

/** Closes the pooled connections to receivers (at shutdown, so none outlives the instance's work). */
export function closeIdleConnections(): void {
  agents.http.destroy();
  agents.https.destroy();
}

function requestOptions(
  { url, checked, headers, body }: WebhookRequest,
  pooled: boolean,
): RequestOptions & { servername?: string } {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const lowered = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    // Connecting to the checked address itself, not the hostname, leaves nothing to resolve, so
    // a DNS answer that changed since the check (rebinding) cannot redirect the attempt.
    host: checked.address,
    port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: {
      ...lowered,
      host: url.host,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'user-agent': USER_AGENT,
    },
    // The certificate is checked against the servername; TLS has no SNI for an IP address, and then
    // Node checks the certificate against the IP address connected to, which is the URL's.
    servername: isIP(hostname) === 0 ? hostname.replace(/\.$/, '') : undefined,
    agent: pooled ? (url.protocol === 'https:' ? agents.https : agents.http) : false,
  };
}

/**
 * POSTs one attempt to `checked.address`, with the URL's host in the Host header and in TLS. The
 * whole attempt (connecting, the response headers, reading the body) is bounded by `timeoutMs`;
 * past it the result is the timeout error even if the status had arrived. Redirects are not
 * followed: a 3xx is a status like any other. A connection whose answer was read to its end goes
 * back to the pool; one cut short (a timeout, a body past MAX_RESPONSE_BODY_BYTES, an error) is
 * closed. A pooled connection the receiver had closed meanwhile fails before any answer: the
 * request is then sent once more on a new connection, within the same bound. Never rejects.
 */
export function sendWebhook(request: WebhookRequest): Promise<AttemptResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let outgoing: ClientRequest | undefined;
    let done = false;
    const finish = (outcome: { status: number } | { error: string }, reusable = false) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (!reusable) outgoing?.destroy();
      resolve({ ...outcome, durationMs: Math.round(performance.now() - started) });
    };
    const timer = setTimeout(() => finish({ error: `timeout after ${request.timeoutMs} ms` }), request.timeoutMs);

    // A checked address is an IP address; anything else would be resolved by the socket.
    if (isIP(request.checked.address) === 0) return finish({ error: 'connection failed: invalid address' });
    const send = request.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const post = (pooled: boolean) => {
      let answered = false;
      try {
        outgoing = send(requestOptions(request, pooled));
      } catch (error) {
        // Header names or values that cannot be sent are refused synchronously.
        return finish({ error: describeFailure(error) });
      }
      const sent = outgoing;
      sent.on('error', (error) => {
        if (done || sent !== outgoing) return;
        const stale =
          sent.reusedSocket && !answered && STALE_CONNECTION_CODES.has((error as { code?: string }).code ?? '');
        if (stale) post(false);
        else finish({ error: describeFailure(error) });
      });
      sent.on('response', (response: IncomingMessage) => {
        answered = true;
        const status = response.statusCode ?? 0;
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BODY_BYTES) finish({ status });
        });
        // The status has arrived: a body the receiver cuts short does not change it. Only our own
        // timeout does, as the attempt then counts as not answered.
        response.on('end', () => finish({ status }, true));
        response.on('error', () => finish({ status }));
        response.on('close', () => finish({ status }));
      });
      sent.end(request.body);
    };
    post(true);
  });
}

/** How a pooled connection the receiver closed while it was idle fails when it is reused. */
const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);
