import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret } from './signing-secret';

describe(newSigningSecret.name, () => {
  it('is whsec_ and the base64 of 32 random bytes', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('is a secret standardwebhooks signs and verifies with, as its 32 bytes', () => {
    const secret = newSigningSecret();
    const webhook = new Webhook(secret);
    const body = '{"type":"plant.created"}';
    const timestamp = new Date();
    const signature = webhook.sign('msg_1', timestamp, body);

    const seconds = String(Math.floor(timestamp.getTime() / 1000));
    const hmac = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
      .update(`msg_1.${seconds}.${body}`)
      .digest('base64');
    expect(signature).toBe(`v1,${hmac}`);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': seconds, 'webhook-signature': signature };
    expect(webhook.verify(body, headers)).toEqual({ type: 'plant.created' });
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });
});
