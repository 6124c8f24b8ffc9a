import { ThrottlerStorage } from '@nestjs/throttler';

interface Window {
  hits: number;
  /** Epoch ms when the count starts again. */
  resetAt: number;
  /** Epoch ms until which the key is refused; 0 when it is not. */
  blockedUntil: number;
}

type StorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * Per-instance counts: a fixed window per key, the same rule the Redis storage applies (INCR with
 * an expiry), in constant time and memory per key. The throttler's own in-memory storage keeps a
 * timestamp per hit and copies them on every request, which costs more the higher the limit.
 */
export class MemoryCounter {
  private readonly windows = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), sweepEveryMs);
    this.sweeper.unref();
  }

  get size(): number {
    return this.windows.size;
  }

  increment(key: string, ttlMs: number, limit: number, blockDurationMs: number, now = Date.now()): StorageRecord {
    let window = this.windows.get(key);
    if (!window || (window.resetAt <= now && window.blockedUntil <= now)) {
      window = { hits: 0, resetAt: now + ttlMs, blockedUntil: 0 };
      this.windows.set(key, window);
    }
    window.hits += 1;
    if (window.blockedUntil <= now && window.hits > limit) window.blockedUntil = now + blockDurationMs;
    const isBlocked = window.blockedUntil > now;
    return {
      totalHits: window.hits,
      timeToExpire: Math.ceil((window.resetAt - now) / 1000),
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.ceil((window.blockedUntil - now) / 1000) : 0,
    };
  }

  /** Forgets windows that are over, so idle callers cost nothing. */
  sweep(now: number): void {
    for (const [key, window] of this.windows) {
      if (window.resetAt <= now && window.blockedUntil <= now) this.windows.delete(key);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
