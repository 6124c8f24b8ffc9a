/**
 * Diagnosis only, never part of the service: preloaded (node -r) into a second instance of the
 * service to measure what the in-memory rate-limit storage costs. @nestjs/throttler's
 * ThrottlerStorageService keeps one expiry time per hit in the window and filters that whole list
 * on every request (O(hits in the last minute)); this swaps it for a fixed-window counter, O(1),
 * with the same answer shape. The limit still applies; only the bookkeeping differs.
 */
import { ThrottlerStorageService } from '@nestjs/throttler';

interface Window {
  start: number;
  hits: number;
}

const windows = new Map<string, Window>();

ThrottlerStorageService.prototype.increment = async function increment(key: string, ttl: number, limit: number, _blockDuration: number, throttlerName: string) {
  const now = Date.now();
  const id = `${throttlerName}:${key}`;
  let window = windows.get(id);
  if (!window || now - window.start >= ttl) {
    window = { start: now, hits: 0 };
    windows.set(id, window);
  }
  window.hits++;
  const timeToExpire = Math.max(1, Math.ceil((window.start + ttl - now) / 1000));
  const isBlocked = window.hits > limit;
  return { totalHits: window.hits, timeToExpire, isBlocked, timeToBlockExpire: isBlocked ? timeToExpire : 0 };
};
