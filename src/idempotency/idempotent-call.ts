import { HttpException } from '@nestjs/common';
import type { Request } from 'express';
import { Principal } from '../auth/principal';
import { REPLAYED_HEADER, parseIdempotencyKey, requestFingerprint } from './idempotency-key';
import { IdempotencyService, parseStoredBody } from './idempotency.service';

type AuthenticatedRequest = Request & { user: Principal };

/** What runIdempotent needs of the route: its success status, and whether that answer is stored sealed. */
export interface IdempotentCall {
  status: number;
  sealAnswer?: boolean;
}

/**
 * Runs the handler of an unsafe request under its `Idempotency-Key` (the @Idempotent() decorator
 * calls it). Without the field the handler runs as it is, at the cost of one header lookup. With
 * one, the key is taken first, for this request's method, path (its ids included) and body; a
 * repeat gets the stored answer (`Idempotent-Replayed: true`); the handler runs in a transaction
 * that also stores its answer, or the key is freed on a 5xx.
 * Validation runs before the handler, so a refused body is not stored: the same body is refused the
 * same way again. `prepare`, when given, runs before the transaction (and not for a replay): work
 * that waits on something other than the database, such as a DNS lookup, holds no transaction open
 * (on SQLite, one open transaction holds every other write); the handler gets what it returns.
 */
export function runIdempotent<T, P = void>(
  idempotency: Pick<IdempotencyService, 'begin' | 'succeed' | 'failed'>,
  req: Request,
  route: IdempotentCall,
  handler: (prepared: P) => Promise<T>,
  prepare?: () => Promise<P>,
): Promise<T> {
  const header = req.headers['idempotency-key'];
  // Without the field, nothing on the way but this lookup: not even a promise of its own.
  if (header === undefined) return prepare ? prepare().then(handler) : handler(undefined as P);
  return underKey(idempotency, req, route, header, handler, prepare);
}

async function underKey<T, P>(
  idempotency: Pick<IdempotencyService, 'begin' | 'succeed' | 'failed'>,
  req: Request,
  route: IdempotentCall,
  header: string | string[],
  handler: (prepared: P) => Promise<T>,
  prepare?: () => Promise<P>,
): Promise<T> {
  const key = parseIdempotencyKey(header);
  const fingerprint = requestFingerprint(req.method, req.path, req.body);
  const begun = await idempotency.begin({ owner: (req as AuthenticatedRequest).user.subject, key }, fingerprint, {
    successStatus: route.status,
    sealSuccess: route.sealAnswer ?? false,
  });
  if (begun.kind === 'replay') {
    req.res?.setHeader(REPLAYED_HEADER, 'true');
    if (begun.statusCode >= 400) {
      const stored = parseStoredBody(begun.body) as { message: string };
      throw new HttpException(stored.message, begun.statusCode);
    }
    // An answer without a body (a delete's 204) is stored as no text.
    return (begun.body === '' ? undefined : parseStoredBody(begun.body)) as T;
  }
  const held = begun.held;
  try {
    const prepared = prepare ? await prepare() : (undefined as P);
    return await idempotency.succeed(held, () => handler(prepared));
  } catch (error) {
    await idempotency.failed(held, error);
    throw error;
  }
}
