import { IncomingHttpHeaders, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Webhooks on, for receivers on this machine (http, loopback), with a schedule and polling short
 * enough for tests.
 */
export const WEBHOOK_TEST_ENV = {
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '1000',
};

export interface ReceivedDelivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The payload as `standardwebhooks` verified it, or the reason it did not. */
  verified: { ok: true; payload: unknown } | { ok: false; reason: string };
  /** When the request had arrived whole (Date.now()). */
  receivedAt: number;
  /** When it was answered (Date.now()), once it has been. */
  answeredAt?: number;
}

/** What the receiver answers at a path: a status, a status after a while (a slow receiver), or nothing at all (`hang`). */
export type Answer = number | { status: number; afterMs: number } | 'hang';

/**
 * A local webhook endpoint: it records every delivery, verifies each with the subscription's
 * secret through the `standardwebhooks` package, and answers per path as the test says.
 */
export class WebhookReceiver {
  readonly deliveries: ReceivedDelivery[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly answers = new Map<string, Answer[]>();
  private readonly hanging = new Map<ServerResponse, ReceivedDelivery>();
  private readonly late = new Set<NodeJS.Timeout>();
  private server?: Server;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const delivery: ReceivedDelivery = {
          path,
          headers: req.headers,
          body,
          verified: this.verify(path, body, req.headers),
          receivedAt: Date.now(),
        };
        this.deliveries.push(delivery);
        const queue = this.answers.get(path) ?? [];
        const answer = queue.length > 1 ? queue.shift()! : (queue[0] ?? 204);
        if (answer === 'hang') {
          this.hanging.set(res, delivery);
          res.on('close', () => this.hanging.delete(res));
          return;
        }
        if (typeof answer === 'number') return this.respond(res, delivery, answer);
        const timer = setTimeout(() => {
          this.late.delete(timer);
          this.respond(res, delivery, answer.status);
        }, answer.afterMs);
        this.late.add(timer);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The secret deliveries to `path` must be signed with. */
  expectSecret(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  /** Answers in turn; the last one stays. Unset paths answer 204. */
  answer(path: string, ...answers: Answer[]): void {
    this.answers.set(path, answers);
  }

  /** Answers the requests to `path` that are being held (`hang`) with `status`. */
  release(path: string, status: number): void {
    for (const [res, delivery] of this.hanging) if (delivery.path === path) this.respond(res, delivery, status);
  }

  at(path: string): ReceivedDelivery[] {
    return this.deliveries.filter((delivery) => delivery.path === path);
  }

  async close(): Promise<void> {
    for (const timer of this.late) clearTimeout(timer);
    for (const res of this.hanging.keys()) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private respond(res: ServerResponse, delivery: ReceivedDelivery, status: number): void {
    delivery.answeredAt = Date.now();
    res.writeHead(status).end();
  }

  private verify(path: string, body: string, headers: IncomingHttpHeaders): ReceivedDelivery['verified'] {
    const secret = this.secrets.get(path);
    if (secret === undefined) return { ok: false, reason: 'no secret registered for this path' };
    try {
      return { ok: true, payload: new Webhook(secret).verify(body, headers as Record<string, string>) };
    } catch (error) {
      return { ok: false, reason: (error as Error).message };
    }
  }
}
