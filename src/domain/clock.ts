/** @module Time: a clock is passed in everywhere; stored times are whole epoch seconds, shown as ISO 8601 UTC. */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to: for tests and tools that replay time. */
export class FixedClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export type EpochSeconds = number;

export function nowSeconds(clock: Clock): EpochSeconds {
  return Math.floor(clock.now() / 1000);
}

/** `2026-04-15T13:55:29Z`: ISO 8601, UTC, whole seconds. */
// Answers repeat the same few instants (this second, the windows' ends): formatted once each.
const formatted = new Map<EpochSeconds, string>();
const MAX_FORMATTED = 4096;

export function isoSeconds(seconds: EpochSeconds): string {
  let iso = formatted.get(seconds);
  if (iso === undefined) {
    // toISOString() is always YYYY-MM-DDTHH:MM:SS.sssZ for these years: keep the seconds, add Z.
    iso = `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
    if (formatted.size >= MAX_FORMATTED) formatted.clear();
    formatted.set(seconds, iso);
  }
  return iso;
}
