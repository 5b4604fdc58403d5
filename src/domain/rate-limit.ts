/**
 * @module Sliding-window rate limits in memory: per API key (requests per second) and per client
 * address (failed authentications per minute). A window is cut into SLOTS slots; each key keeps
 * the count and the last event's time of its last SLOTS + 1 slots, so a call costs the same
 * whatever the limit (no log of timestamps), and a key unseen for a window and a slot is forgotten.
 *
 * The rule (docs/security.md): at most the limit within the last window's slots (between nine
 * tenths of the window and all of it), which a fresh key may spend at once; and at most the limit
 * plus a tenth of it (rounded down) counting also the slot before them, as long as that slot's last
 * event is less than a window old. Any span one window long meets at most SLOTS + 1 slots, and
 * every event in it was admitted under the second count: so no such span ever holds more than the
 * limit plus a tenth, where a fixed window admitted twice the limit across its boundary.
 */
import type { Clock } from './clock.js';

export interface LimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds (at least 1): until the window has forgotten what it counts (allowed), or until a retry can pass (refused). */
  resetSeconds: number;
}

/** The slots a window is cut into. */
export const SLOTS = 10;
const N = SLOTS + 1;
/** A slot's place in the ring (slots before the epoch too: a test's clock may start at 0). */
const ix = (slot: number) => ((slot % N) + N) % N;

/** One key's last SLOTS + 1 slots, in a ring indexed by the slot's number modulo N. */
interface History {
  /** The latest slot counted (a number of slots since the epoch), and its place in the ring. */
  slot: number;
  at: number;
  counts: number[];
  lastAt: number[];
  /** Events in the last SLOTS slots, the latest included. */
  recent: number;
  /** Events in all N slots. */
  all: number;
}

export class SlidingWindowLimiter {
  readonly windowMs: number;
  readonly slotMs: number;
  /** What the count reaching one slot further back may hold: the limit plus a tenth. */
  readonly ceiling: number;
  /** Histories touched in this generation, and in the one before (a generation is N slots long). */
  private current = new Map<string, History>();
  private previous = new Map<string, History>();
  private generationEnds = Number.NEGATIVE_INFINITY;
  /** Until when some key may be full: before then, peek has to look; after, it allows everyone. */
  private fullUntil = Number.NEGATIVE_INFINITY;

  constructor(
    readonly limit: number,
    readonly windowSeconds: number,
    private readonly clock: Clock,
  ) {
    this.windowMs = windowSeconds * 1000;
    this.slotMs = this.windowMs / SLOTS;
    this.ceiling = limit + Math.floor(limit / 10);
  }

  /** `n` events for `key` if they fit, all or none: counted only when allowed. */
  take(key: string, n = 1): LimitState {
    const now = this.clock.now();
    const h = this.history(key, now);
    if (!this.fits(h, now, n)) return this.refused(h, now, n);
    this.add(h, now, n);
    return this.allowed(h, now);
  }

  /** One event that happened (a failed authentication): always counted; `allowed` says whether it was within the limit. */
  record(key: string): LimitState {
    const now = this.clock.now();
    const h = this.history(key, now);
    const within = this.fits(h, now, 1);
    this.add(h, now, 1);
    return within ? this.allowed(h, now) : this.refused(h, now, 1);
  }

  /** Whether one more event for `key` would be within the limit, counting nothing. */
  peek(key: string): LimitState {
    const now = this.clock.now();
    const h = this.history(key, now);
    return this.fits(h, now, 1) ? this.allowed(h, now) : this.refused(h, now, 1);
  }

  /** Whether any key may be full (if none is, `peek` allows every key). */
  anyFull(): boolean {
    return this.clock.now() < this.fullUntil;
  }

  private history(key: string, now: number): History {
    if (now >= this.generationEnds) {
      this.previous = now >= this.generationEnds + N * this.slotMs ? new Map() : this.current;
      this.current = new Map();
      this.generationEnds = now + N * this.slotMs;
    }
    const slot = Math.floor(now / this.slotMs);
    let h = this.current.get(key);
    if (h === undefined) {
      h = this.previous.get(key) ?? {
        slot,
        at: ix(slot),
        counts: new Array<number>(N).fill(0),
        lastAt: new Array<number>(N).fill(0),
        recent: 0,
        all: 0,
      };
      this.current.set(key, h);
    }
    advance(h, slot);
    return h;
  }

  /** The events the second rule counts now: the recent slots, and the one before while its last event is within a window. */
  private span(h: History, now: number): number {
    // The oldest slot's place is the one after the latest's.
    return h.lastAt[h.at === SLOTS ? 0 : h.at + 1]! > now - this.windowMs ? h.all : h.recent;
  }

  private fits(h: History, now: number, n: number): boolean {
    return h.recent + n <= this.limit && this.span(h, now) + n <= this.ceiling;
  }

  private add(h: History, now: number, n: number): void {
    h.counts[h.at]! += n;
    if (now > h.lastAt[h.at]!) h.lastAt[h.at] = now;
    h.recent += n;
    h.all += n;
    const full = h.recent >= this.limit || this.span(h, now) >= this.ceiling;
    if (full) this.fullUntil = Math.max(this.fullUntil, (h.slot + N) * this.slotMs);
  }

  private allowed(h: History, now: number): LimitState {
    // What this slot counted is forgotten by the first rule once SLOTS slots have begun after it.
    const resetMs = (h.slot + SLOTS) * this.slotMs - now;
    return this.state(true, h, resetMs);
  }

  private refused(h: History, now: number, n: number): LimitState {
    return this.state(false, h, this.waitMs(h, now, n));
  }

  private state(allowed: boolean, h: History, ms: number): LimitState {
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, this.limit - h.recent),
      resetSeconds: Math.max(1, Math.ceil(ms / 1000)),
    };
  }

  /** How long until `n` more events fit, as slots leave the window (the refusal's Retry-After). */
  private waitMs(h: History, now: number, n: number): number {
    for (let s = 1; s <= N; s++) {
      const at = (h.slot + s) * this.slotMs;
      // At `at`, the first rule counts the slots after h.slot + s - SLOTS; the second, that one too.
      let recent = 0;
      for (let j = Math.max(h.slot + s - SLOTS + 1, h.slot - SLOTS); j <= h.slot; j++)
        recent += h.counts[ix(j)]!;
      if (recent + n > this.limit) continue;
      const oldest = h.slot + s - SLOTS;
      const count = oldest >= h.slot - SLOTS ? h.counts[ix(oldest)]! : 0;
      if (recent + count + n <= this.ceiling) return at - now;
      if (recent + n <= this.ceiling) return Math.max(at, h.lastAt[ix(oldest)]! + this.windowMs) - now;
    }
    return N * this.slotMs;
  }
}

/** Moves `h` on to `slot`: the slots that left are taken off its counts. A clock gone back stays in the latest slot. */
function advance(h: History, slot: number): void {
  if (slot <= h.slot) return;
  if (slot - h.slot >= N) {
    h.counts.fill(0);
    h.lastAt.fill(0);
    h.recent = 0;
    h.all = 0;
    h.slot = slot;
    h.at = ix(slot);
    return;
  }
  while (h.slot < slot) {
    const next = h.slot + 1;
    h.recent -= h.counts[ix(next - SLOTS)]!;
    const leaving = ix(next);
    h.all -= h.counts[leaving]!;
    h.counts[leaving] = 0;
    h.lastAt[leaving] = 0;
    h.slot = next;
    h.at = leaving;
  }
}
