/**
 * @module Usage by the hour: an account's calls, tokens and failed calls in each UTC hour, for the
 * console's view of one day. Kept for the last HOURLY_RETENTION_DAYS days only, and per account
 * (not per key, tool and surface as the days are): at most 24 rows a day for an account that calls
 * every hour, a few bytes each, beside the daily rollup that keeps the history.
 */

/** The days whose hours are kept, today included. */
export const HOURLY_RETENTION_DAYS = 7;

export interface HourCounts {
  calls: number;
  tokens: number;
  /** Refused or failed after authentication (a 4xx or 5xx). */
  failed: number;
}

/** One account's counts in one UTC hour (0 to 23) of one day (`YYYY-MM-DD`). */
export interface HourRow extends HourCounts {
  accountId: string;
  day: string;
  hour: number;
}

/** One hour of a day's view, summed. */
export type HourGroup = HourCounts & { hour: number };

export const zeroHourCounts = (): HourCounts => ({ calls: 0, tokens: 0, failed: 0 });

export function addHourCounts(into: HourCounts, from: HourCounts): void {
  into.calls += from.calls;
  into.tokens += from.tokens;
  into.failed += from.failed;
}

/** Two lists of hours as one, summed where an hour is in both, in hour order. */
export function mergeHours(a: readonly HourGroup[], b: readonly HourGroup[]): HourGroup[] {
  const merged = new Map(a.map((g) => [g.hour, { ...g }]));
  for (const u of b) {
    const g = merged.get(u.hour);
    if (g) addHourCounts(g, u);
    else merged.set(u.hour, { ...u });
  }
  return [...merged.values()].sort((x, y) => x.hour - y.hour);
}
