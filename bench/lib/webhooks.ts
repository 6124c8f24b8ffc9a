/**
 * What the benchmarks that measure webhook subscriptions share: the service's webhook settings, a
 * local endpoint that answers every delivery, and a subscription made through the service's API.
 */
import { randomBytes } from 'node:crypto';
import { Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';

/** A fresh signing key, and the receiver on this machine allowed over http. */
export function webhookEnvironment(): NodeJS.ProcessEnv {
  return {
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  };
}

export interface Receiver {
  server: Server;
  url: string;
  /** Deliveries received so far. */
  received(): number;
}

/** A subscription's endpoint on 127.0.0.1, in this process: answers 204 and counts what it received. */
export async function startReceiver(): Promise<Receiver> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { server, url, received: () => received };
}

/** One subscription to plant.created and plant.deleted for the token's owner, on the instance at `port`. */
export async function subscribe(port: number, token: string, receiverUrl: string): Promise<void> {
  const subscribed = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiverUrl, events: ['plant.created', 'plant.deleted'] }),
  });
  if (subscribed.status !== 201) throw new Error(`POST /webhooks on :${port} answered ${subscribed.status}`);
}
