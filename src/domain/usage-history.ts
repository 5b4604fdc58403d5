/**
 * @module Usage history: what is counted of each authenticated tool call (per account, UTC day, key,
 * tool and surface; its amount by unit, records apart from pages), how a call's outcome is classed,
 * the periods `get_usage` reports, and a subscription's monthly billing period. Pure: days are
 * `YYYY-MM-DD` strings, times epoch seconds.
 */
import type { EpochSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';

export interface UsageCounts {
  calls: number;
  tokens: number;
  /** The amounts of tools counting records (the seed system's unit). */
  records: number;
  /** Hits that returned records. */
  withData: number;
  /** Misses, and hits that returned none. */
  withoutData: number;
  /** Refused or failed after authentication (a 4xx or 5xx). */
  failed: number;
}

/** The counts, and the amounts of tools counting other units than records. */
export interface CountsByUnit extends UsageCounts {
  /**
   * The amounts of tools counting another unit, by unit (`{"pages": 40}`); undefined when none:
   * kept apart from records, never added to them.
   */
  units?: Record<string, number> | undefined;
}

export type Surface = 'http' | 'mcp';

/** One row of the rollup: the counts of one account, day, key, tool and surface. */
export interface UsageRow extends CountsByUnit {
  accountId: string;
  day: string;
  keyId: string;
  tool: string;
  surface: Surface;
}

export type UsageGrouping = 'day' | 'key' | 'tool';
export const USAGE_GROUPINGS: readonly UsageGrouping[] = ['day', 'key', 'tool'];

/**
 * What one call came to: `records` is the amount it counted, in its tool's `unit` (records when
 * absent).
 */
export type CallOutcome =
  | { kind: 'answered'; records: number; tokens: number; missed: boolean; unit?: string | undefined }
  | { kind: 'failed' };

export const zeroCounts = (): CountsByUnit => ({
  calls: 0,
  tokens: 0,
  records: 0,
  // Present from the start: counts made with and without it share one shape.
  units: undefined,
  withData: 0,
  withoutData: 0,
  failed: 0,
});

/** Adds one call's outcome to `c` in place. */
export function countCall(c: CountsByUnit, outcome: CallOutcome): void {
  c.calls++;
  if (outcome.kind === 'failed') {
    c.failed++;
    return;
  }
  c.tokens += outcome.tokens;
  const unit = outcome.unit;
  if (unit === undefined || unit === 'records') c.records += outcome.records;
  else if (outcome.records > 0) {
    // Only a tool of another unit makes this object, once per row and day.
    c.units ??= {};
    c.units[unit] = (c.units[unit] ?? 0) + outcome.records;
  }
  if (!outcome.missed && outcome.records > 0) c.withData++;
  else c.withoutData++;
}

export function addCounts(into: CountsByUnit, from: CountsByUnit): void {
  into.calls += from.calls;
  into.tokens += from.tokens;
  into.records += from.records;
  if (from.units) into.units = sumUnits(into.units, from.units);
  into.withData += from.withData;
  into.withoutData += from.withoutData;
  into.failed += from.failed;
}

/** Two sets of unit amounts summed, as a new object: a group's may be shared by its copies. */
function sumUnits(a: Record<string, number> | undefined, b: Record<string, number>): Record<string, number> {
  const sum: Record<string, number> = { ...a };
  for (const unit in b) if (Object.hasOwn(b, unit)) sum[unit] = (sum[unit] ?? 0) + b[unit]!;
  return sum;
}

const DAY_SECONDS = 86_400;

/** The UTC day of an instant, `YYYY-MM-DD`. */
export function dayOf(seconds: EpochSeconds): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A `YYYY-MM-DD` that names a real day, as the start of that day in epoch seconds; else undefined. */
export function parseDay(day: string): EpochSeconds | undefined {
  const m = DAY.exec(day);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return dayOf(ms / 1000) === day ? ms / 1000 : undefined;
}

/** Every day from `from` to `to`, both included (at most `max`). */
export function daysBetween(from: string, to: string, max = 1_000): string[] {
  const start = parseDay(from);
  const end = parseDay(to);
  if (start === undefined || end === undefined) return [];
  const days: string[] = [];
  for (let t = start; t <= end && days.length < max; t += DAY_SECONDS) days.push(dayOf(t));
  return days;
}

export function addDays(day: string, n: number): string {
  return dayOf((parseDay(day) ?? 0) + n * DAY_SECONDS);
}

/** The most days one history query may span. */
export const MAX_HISTORY_DAYS = 400;

/** Checks an operator's `from`/`to` (defaults: the 30 days ending today). */
export function historyRange(
  today: string,
  from: string | undefined,
  to: string | undefined,
): Result<{ from: string; to: string }> {
  const end = to ?? today;
  const start = from ?? addDays(end, -29);
  for (const [name, value] of [
    ['from', start],
    ['to', end],
  ] as const) {
    if (parseDay(value) === undefined) return fail('invalid_arguments', `${name} must be a day, YYYY-MM-DD.`);
  }
  if (start > end) return fail('invalid_arguments', 'from must not be after to.');
  if (daysBetween(start, end, MAX_HISTORY_DAYS + 1).length > MAX_HISTORY_DAYS) {
    return fail('invalid_arguments', `A history spans at most ${MAX_HISTORY_DAYS} days.`);
  }
  return ok({ from: start, to: end });
}

/** A monthly subscription's current period: anchored at `since`, a month at a time (day clamped to the month's end). */
export function monthlyPeriod(
  since: EpochSeconds,
  now: EpochSeconds,
): { start: EpochSeconds; end: EpochSeconds } {
  const anchor = new Date(since * 1000);
  const at = (months: number) => {
    const y = anchor.getUTCFullYear();
    const m = anchor.getUTCMonth() + months;
    const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    return (
      Date.UTC(
        y,
        m,
        Math.min(anchor.getUTCDate(), lastDay),
        anchor.getUTCHours(),
        anchor.getUTCMinutes(),
        anchor.getUTCSeconds(),
      ) / 1000
    );
  };
  if (now < since) return { start: since, end: at(1) };
  const nowDate = new Date(now * 1000);
  let months =
    (nowDate.getUTCFullYear() - anchor.getUTCFullYear()) * 12 +
    (nowDate.getUTCMonth() - anchor.getUTCMonth());
  if (at(months) > now) months--;
  return { start: at(months), end: at(months + 1) };
}

export const USAGE_PERIODS = ['today', 'week', 'month', 'billing_cycle'] as const;
export type UsagePeriod = (typeof USAGE_PERIODS)[number];

/**
 * The days `get_usage` reports: `today`; `week` the 7 UTC days ending today; `month` 30;
 * `billing_cycle` the current period up to today (or `month` without a subscription).
 */
export function usagePeriodDays(
  period: UsagePeriod,
  now: EpochSeconds,
  billing: { start: EpochSeconds } | null,
): { from: string; to: string } {
  const today = dayOf(now);
  switch (period) {
    case 'today':
      return { from: today, to: today };
    case 'week':
      return { from: addDays(today, -6), to: today };
    case 'month':
      return { from: addDays(today, -29), to: today };
    case 'billing_cycle':
      return billing ? { from: dayOf(billing.start), to: today } : { from: addDays(today, -29), to: today };
  }
}
