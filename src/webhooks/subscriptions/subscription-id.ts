import { randomBytes } from 'node:crypto';

/**
 * The largest id the service gives a subscription: 2^53 - 1, JavaScript's Number.MAX_SAFE_INTEGER.
 * Every JSON parser reads an integer up to it exactly, one that reads numbers as doubles included
 * (`JSON.parse`, axios, Swagger UI), so an id read from an answer names the same subscription when
 * it is sent back.
 */
export const MAX_SUBSCRIPTION_ID = 2n ** 53n - 1n;

/**
 * A random id from 1 to MAX_SUBSCRIPTION_ID: known without reading the row back, and it tells
 * nothing of how many subscriptions exist.
 */
export function newSubscriptionId(): bigint {
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE() >> 11n;
    if (id !== 0n) return id;
  }
}
