import { HttpException } from '@nestjs/common';
import type { Request } from 'express';
import { Principal } from '../auth/principal';
import { routeTemplate } from '../common/http/route-template';
import { REPLAYED_HEADER, parseIdempotencyKey, requestFingerprint } from './idempotency-key';
import { IdempotencyService, parseStoredBody } from './idempotency.service';

export interface IdempotentOptions {
  /** The status of the route's success answer. */
  successStatus: number;
  /** The success answer carries a secret: it is stored sealed (WEBHOOK_SECRET_KEY). */
  sealSuccess?: boolean;
}

type AuthenticatedRequest = Request & { user: Principal };

/**
 * Runs the handler of a creating POST under its `Idempotency-Key`. Without the field the handler runs
 * as it is, at the cost of one header lookup: a Nest interceptor would wrap every create in an
 * Observable pipeline (about a third more CPU per create, bench/RESULTS.md). With one, the key is
 * taken first; a repeat gets the stored answer (`Idempotent-Replayed: true`); the handler runs in a
 * transaction that also stores its answer, or the key is freed on a 5xx.
 * Validation runs before the handler, so a refused body is not stored: the same body is refused the
 * same way again.
 */
export async function runIdempotent<T>(
  idempotency: Pick<IdempotencyService, 'begin' | 'succeed' | 'failed'>,
  req: Request,
  options: IdempotentOptions,
  handler: () => Promise<T>,
): Promise<T> {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return handler();
  const key = parseIdempotencyKey(header);
  const fingerprint = requestFingerprint(req.method, routeTemplate(req) ?? req.path, req.body);
  const begun = await idempotency.begin({ owner: (req as AuthenticatedRequest).user.subject, key }, fingerprint, {
    successStatus: options.successStatus,
    sealSuccess: options.sealSuccess ?? false,
  });
  if (begun.kind === 'replay') {
    req.res?.setHeader(REPLAYED_HEADER, 'true');
    if (begun.statusCode >= 400) {
      const stored = parseStoredBody(begun.body) as { message: string };
      throw new HttpException(stored.message, begun.statusCode);
    }
    return parseStoredBody(begun.body) as T;
  }
  const held = begun.held;
  try {
    return await idempotency.succeed(held, handler);
  } catch (error) {
    await idempotency.failed(held, error);
    throw error;
  }
}
