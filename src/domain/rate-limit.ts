/**
 * @module Fixed-window counters in memory: per API key (requests per second) and per client
 * address (failed authentications per minute). Each window's counts are dropped whole when the
 * next window starts, so memory holds only the keys and addresses seen in the current window.
 */
import type { Clock } from './clock.js';

export interface LimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window ends (at least 1). */
  resetSeconds: number;
}

export class FixedWindowLimiter {
  private window = -1;
  /** Each key's count in this window, in a box: a hit on a key already seen is one Map lookup. */
  private counts = new Map<string, { n: number }>();
  /** Keys at (or past) the limit in this window: while there are none, nobody is refused. */
  private full = 0;

  constructor(
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly clock: Clock,
  ) {}

  private roll(nowMs: number): number {
    const lengthMs = this.windowSeconds * 1000;
    const window = Math.floor(nowMs / lengthMs);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
      this.full = 0;
    }
    return Math.max(1, Math.ceil(((window + 1) * lengthMs - nowMs) / 1000));
  }

  /** Counts one event for `key` and says whether it is within the limit. */
  hit(key: string): LimitState {
    const resetSeconds = this.roll(this.clock.now());
    const box = this.counts.get(key);
    let count: number;
    if (box === undefined) {
      count = 1;
      this.counts.set(key, { n: 1 });
    } else {
      count = box.n + 1;
      // Past the limit the count stops growing: it is only ever compared with the limit.
      if (count <= this.limit + 1) box.n = count;
    }
    if (count === this.limit) this.full++;
    return {
      allowed: count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds,
    };
  }

  /** Whether any key has reached the limit in this window (if none has, `peek` allows every key). */
  anyFull(): boolean {
    this.roll(this.clock.now());
    return this.full > 0;
  }

  /** Where `key` stands, without counting anything. */
  peek(key: string): LimitState {
    const resetSeconds = this.roll(this.clock.now());
    const count = this.counts.get(key)?.n ?? 0;
    return {
      allowed: count < this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds,
    };
  }
}
