import { IncomingMessage } from 'node:http';

/**
 * What a request's Authorization header says, read once the same way by the rate limit, the bearer
 * guard and (through the guard's strategy) Passport, so no layer counts as a token what another
 * refuses.
 * - `bearer`: `Bearer`, one or more spaces, a token68/b64token (RFC 6750 section 2.1), any case of
 *   the scheme name;
 * - `invalid-bearer`: the Bearer scheme with anything else after it (an empty or two-part value);
 * - `other`: another scheme (Basic, ...), which this API does not accept;
 * - `duplicate`: more than one Authorization header, which Node would reduce to the first;
 * - `absent`: none.
 */
export type Authorization =
  | { kind: 'bearer'; secret: string }
  | { kind: 'invalid-bearer' }
  | { kind: 'other' }
  | { kind: 'duplicate' }
  | { kind: 'absent' };

const BEARER = /^bearer(?: +([A-Za-z0-9\-._~+/]+=*) *)?$/i;
const BEARER_SCHEME = /^bearer(?:[ \t]|$)/i;

const ABSENT: Authorization = { kind: 'absent' };
const INVALID_BEARER: Authorization = { kind: 'invalid-bearer' };
const OTHER: Authorization = { kind: 'other' };
const DUPLICATE: Authorization = { kind: 'duplicate' };

/** Node keeps the first of repeated Authorization headers in `headers`; rawHeaders has them all. */
function authorizationHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 13 && name.toLowerCase() === 'authorization') count += 1;
  }
  return count;
}

/** Where a request keeps what its header was read as: the rate limit, the guard and Passport all ask. */
const READ = Symbol('authorization');

type ReadableRequest = Pick<IncomingMessage, 'headers' | 'rawHeaders'> & { [READ]?: Authorization };

export function readAuthorization(req: ReadableRequest): Authorization {
  return (req[READ] ??= parseAuthorization(req));
}

function parseAuthorization(req: ReadableRequest): Authorization {
  const header = req.headers.authorization;
  if (header === undefined) return ABSENT;
  if (authorizationHeaderCount(req.rawHeaders ?? []) > 1) return DUPLICATE;
  const match = BEARER.exec(header);
  if (match?.[1] !== undefined) return { kind: 'bearer', secret: match[1] };
  return match || BEARER_SCHEME.test(header) ? INVALID_BEARER : header === '' ? ABSENT : OTHER;
}
