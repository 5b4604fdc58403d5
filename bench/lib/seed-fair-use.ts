/**
 * @module The fair-use windows a seeded account has, as a database of that many real accounts would
 * hold them: most accounts never made a metered call (no rows), some did long ago (rows whose
 * windows are over), a few this week, fewer in the last five hours (running windows). The shares
 * are those of a data API with a free tier, where most sign-ups stay idle:
 *
 * - 40% of accounts have an `enrich` row (the main product), 30% a `search` row, drawn
 *   independently: about 58% of accounts have at least one, 700,000 rows on 1M accounts.
 * - Of each row, 20% have a running week (`records.1w`), and a quarter of those (5% of the rows)
 *   also running 5-hour windows: about 14% of accounts have a running week, 3.5% running 5 hours.
 * - The rest ended weeks ago (up to 90 days). toolgate never deletes a row: a window that ended is
 *   over by its end, and the next consumption restarts it in place.
 *
 * Every running window still runs an hour after seeding: the bench compares the `search` windows
 * before and after its load, and a window ending mid-run would reset its count. Accounts are drawn by
 * a hash of their index, not by stride, so the evenly spread sample of keys the load rotates over
 * meets the same shares as the whole database. Stored as toolgate stores them: per category an
 * array of `[unit, window, startedAt, endsAt, used]` in key order (src/domain/fair-use-order.ts).
 */
import type { StoredWindow } from '../../src/domain/fair-use-order.js';

/** The share of accounts with a row in each category of the seed plan. */
export const FAIR_USE_SHARES = { enrich: 0.4, search: 0.3 } as const;
/** The share of rows whose week is running; and of those, the share whose 5 hours are running too. */
export const RUNNING_WEEK = 0.2;
export const RUNNING_5H_OF_WEEK = 0.25;

const H5 = 18_000;
const W1 = 604_800;
/** Every running window runs at least this long after seeding. */
const MARGIN = 3_600;
const ENDED_UP_TO = 90 * 86_400;

export type SeededCategory = keyof typeof FAIR_USE_SHARES;
export const SEEDED_CATEGORIES = Object.keys(FAIR_USE_SHARES) as SeededCategory[];

/** What the rows seeded so far hold, for the progress lines and the report. */
export interface FairUseCounts {
  rows: number;
  /** Accounts with at least one row. */
  accounts: number;
  /** Rows whose week is running, and those whose 5-hour windows are running too. */
  runningWeek: number;
  running5h: number;
}

export const noFairUse = (): FairUseCounts => ({ rows: 0, accounts: 0, runningWeek: 0, running5h: 0 });

/** A number in [0, 1) from the account's index and a salt: murmur3's finaliser, so draws are independent. */
export function draw(n: number, salt: number): number {
  let h = (Math.imul(n, 0x9e3779b1) ^ Math.imul(salt + 1, 0x85ebca77)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

/**
 * The windows of account `n` by category (only the categories it has a row in), at `now` (Unix
 * seconds); `counts` is added to.
 */
export function fairUseOf(
  n: number,
  now: number,
  counts: FairUseCounts,
): Partial<Record<SeededCategory, StoredWindow[]>> | null {
  let out: Partial<Record<SeededCategory, StoredWindow[]>> | null = null;
  SEEDED_CATEGORIES.forEach((category, c) => {
    const r = (field: number) => draw(n, c * 16 + field);
    if (r(0) >= FAIR_USE_SHARES[category]) return;
    const state = r(1);
    const requests = 1 + Math.floor(r(2) * 40);
    const records = requests * (1 + Math.floor(r(3) * 10));
    let week: number;
    let hours: number;
    if (state < RUNNING_WEEK * RUNNING_5H_OF_WEEK) {
      week = now - Math.floor(r(4) * (W1 - MARGIN));
      hours = Math.max(week, now - Math.floor(r(5) * (H5 - MARGIN)));
      counts.running5h++;
      counts.runningWeek++;
    } else if (state < RUNNING_WEEK) {
      // The week runs, its last 5 hours ended: both started at least 5 hours ago.
      week = now - H5 - Math.floor(r(4) * (W1 - MARGIN - H5));
      hours = week + Math.floor(r(5) * (now - H5 - week));
      counts.runningWeek++;
    } else {
      week = now - W1 - Math.floor(r(4) * ENDED_UP_TO);
      hours = week + Math.floor(r(5) * (W1 - H5));
    }
    out ??= {};
    out[category] = [
      ['records', '1w', week, week + W1, records + Math.floor(r(6) * 500)],
      ['records', '5h', hours, hours + H5, records],
      ['requests', '5h', hours, hours + H5, requests],
    ];
    counts.rows++;
  });
  if (out) counts.accounts++;
  return out;
}

/** One line on what was seeded: `700,123 fair-use rows (58.1% of accounts), ...`. */
export function fairUseLine(c: FairUseCounts, accounts?: number): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const of = accounts ? ` (${((100 * c.accounts) / accounts).toFixed(1)}% of accounts)` : '';
  return `${n(c.rows)} fair-use rows on ${n(c.accounts)} accounts${of}: ${n(c.runningWeek)} with a running week, ${n(c.running5h)} of them with running 5-hour windows; the rest ended`;
}
