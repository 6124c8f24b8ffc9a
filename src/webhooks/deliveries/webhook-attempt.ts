import { Webhook } from 'standardwebhooks';
import { SecretsService } from '../../secrets/secrets.service';
import { RefusedUrlError, parseWebhookUrl, resolveWebhookAddress } from './address-policy';
import { AttemptResult, sendWebhook } from './webhook-sender';

/** How every attempt is made, by the dispatcher and by a test of an endpoint alike. */
export interface AttemptSettings {
  allowHttp: boolean;
  allowPrivate: boolean;
  timeoutMs: number;
}

/**
 * How long an attempt may hold what it takes for itself (a delivery's claim, a test's lease): resolving
 * the host and the request are each bounded by the timeout, and the margin covers recording the
 * outcome. Past it, what the attempt held is free again, so an instance that died holding it gives it
 * back by itself.
 */
export function attemptLeaseMs(settings: Pick<AttemptSettings, 'timeoutMs'>): number {
  return 2 * settings.timeoutMs + 5000;
}

export interface SignedMessage {
  url: string;
  /** The subscription's live secrets, sealed: the current one, then one a rotation replaced. */
  sealedSecrets: readonly string[];
  webhookId: string;
  body: string;
}

export interface MadeAttempt {
  result: AttemptResult;
  /** The address policy refused the URL: nothing was sent. */
  refused: boolean;
  /** Nothing was sent because of a failure of this side (a secret that cannot be opened): for the log only. */
  failure?: unknown;
}

/**
 * The signature of every live secret, space-separated, as Standard Webhooks allows: during a
 * rotation's grace period a receiver verifying with either secret accepts the delivery.
 */
export function signatures(secrets: readonly string[], webhookId: string, timestamp: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(webhookId, timestamp, body)).join(' ');
}

function openOrNone(secrets: SecretsService, sealed: string): string[] {
  try {
    return [secrets.open(sealed)];
  } catch {
    return [];
  }
}

/**
 * One attempt: the URL checked again by the address policy, the body signed with every live secret
 * and POSTed to the address that was checked. What the subscriber may read of a failure is in the
 * result; what is wrong on this side only in `failure`.
 */
export async function makeAttempt(
  message: SignedMessage,
  settings: AttemptSettings,
  secrets: SecretsService,
): Promise<MadeAttempt> {
  const started = performance.now();
  try {
    const policy = { allowHttp: settings.allowHttp, allowPrivate: settings.allowPrivate };
    const url = parseWebhookUrl(message.url, policy);
    const checked = await resolveWebhookAddress(url, policy, undefined, settings.timeoutMs);
    const [current, ...replaced] = message.sealedSecrets;
    // The current secret must sign; one a rotation replaced that cannot be opened (its key retired
    // before it was resealed, which SecretsService logs and counts) only drops its signature.
    const opened = [secrets.open(current), ...replaced.flatMap((sealed) => openOrNone(secrets, sealed))];
    const timestamp = new Date();
    const result = await sendWebhook({
      url,
      checked,
      body: message.body,
      timeoutMs: settings.timeoutMs,
      headers: {
        'webhook-id': message.webhookId,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signatures(opened, message.webhookId, timestamp, message.body),
      },
    });
    return { result, refused: false };
  } catch (error) {
    const refused = error instanceof RefusedUrlError;
    // Subscribers read this text (GET /webhooks/{id}/deliveries): what is wrong on this side stays in the log.
    const result = {
      error: refused ? (error as Error).message : 'internal error of the sender',
      durationMs: performance.now() - started,
    };
    return refused ? { result, refused } : { result, refused, failure: error };
  }
}
