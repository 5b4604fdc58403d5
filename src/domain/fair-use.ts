/**
 * @module Fair-use windows. A window starts at the first consumption made while it is not running
 * and ends a fixed length later; its end never moves. This module is the reference semantics: the
 * stores implement `consume` as conditional statements and are tested against it.
 */
import { type EpochSeconds, isoSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';
import {
  CATEGORIES,
  type Category,
  limitOf,
  type PlanLimits,
  type Unit,
  WINDOW_SECONDS,
  type WindowKey,
} from './plans.js';

export interface WindowSlot {
  category: Category;
  unit: Unit;
  window: WindowKey;
}

/** A window as stored: it exists once something was consumed in it, and may have ended since. */
export interface WindowState extends WindowSlot {
  startedAt: EpochSeconds;
  endsAt: EpochSeconds;
  used: number;
}

export interface WindowView {
  limit: number;
  used: number;
  remaining: number;
  resets_at: string | null;
}

export type FairUseView = Record<
  Category,
  { records: { '5h': WindowView; '1w': WindowView }; requests: { '5h': WindowView } }
>;

export interface FairUseMetadata {
  records_remaining_5h: number;
  records_reset_5h: string;
  records_remaining_1w: number;
  records_reset_1w: string;
}

/** One window a consumption touches, with the amount to add and the limit it must stay within. */
export interface Increment extends WindowSlot {
  amount: number;
  limit: number;
  lengthSeconds: number;
}

export interface Amounts {
  records: number;
  requests: number;
}

/** The most one consumption may carry in a unit: far above any plan, far below float trouble. */
export const MAX_AMOUNT = 1_000_000_000;

export function isRunning(state: WindowState | undefined, now: EpochSeconds): state is WindowState {
  return state !== undefined && now < state.endsAt;
}

export function sameSlot(a: WindowSlot, b: WindowSlot): boolean {
  return a.category === b.category && a.unit === b.unit && a.window === b.window;
}

/** The windows' key order (category, unit, window), in which both stores read an account's windows. */
export function byWindowKey(a: WindowSlot, b: WindowSlot): number {
  if (a.category !== b.category) return a.category < b.category ? -1 : 1;
  if (a.unit !== b.unit) return a.unit < b.unit ? -1 : 1;
  return a.window < b.window ? -1 : a.window > b.window ? 1 : 0;
}

/** In the primary key's order, as a read gives them; sorted only if not (sorting allocates). */
export function inKeyOrder(windows: WindowState[]): WindowState[] {
  for (let i = 1; i < windows.length; i++) {
    if (byWindowKey(windows[i - 1]!, windows[i]!) > 0) return windows.sort(byWindowKey);
  }
  return windows;
}

export function viewWindow(limit: number, state: WindowState | undefined, now: EpochSeconds): WindowView {
  const used = isRunning(state, now) ? state.used : 0;
  return {
    limit,
    used,
    remaining: Math.max(0, limit - used),
    resets_at: isRunning(state, now) ? isoSeconds(state.endsAt) : null,
  };
}

export function fairUseView(
  limits: PlanLimits,
  states: readonly WindowState[],
  now: EpochSeconds,
): FairUseView {
  return {
    enrich: categoryView(limits, states, 'enrich', now),
    search: categoryView(limits, states, 'search', now),
  };
}

/** One category of the fair-use view (a consumption's answer shows only its own). */
export function categoryView(
  limits: PlanLimits,
  states: readonly WindowState[],
  category: Category,
  now: EpochSeconds,
): FairUseView[Category] {
  let records5h: WindowState | undefined;
  let records1w: WindowState | undefined;
  let requests5h: WindowState | undefined;
  for (const s of states) {
    if (s.category !== category) continue;
    if (s.unit === 'records') {
      if (s.window === '5h') records5h = s;
      else records1w = s;
    } else requests5h = s;
  }
  return {
    records: {
      '5h': viewWindow(limitOf(limits, category, 'records', '5h'), records5h, now),
      '1w': viewWindow(limitOf(limits, category, 'records', '1w'), records1w, now),
    },
    requests: { '5h': viewWindow(limitOf(limits, category, 'requests', '5h'), requests5h, now) },
  };
}

/** `metadata.fair_use`: a category's records windows; a window not running resets a full length from now. */
export function fairUseMetadata(
  limits: PlanLimits,
  states: readonly WindowState[],
  category: Category,
  now: EpochSeconds,
): FairUseMetadata {
  const part = (window: WindowKey) => {
    const state = states.find((s) => sameSlot(s, { category, unit: 'records', window }));
    const limit = limitOf(limits, category, 'records', window);
    return isRunning(state, now)
      ? { remaining: Math.max(0, limit - state.used), reset: isoSeconds(state.endsAt) }
      : { remaining: limit, reset: isoSeconds(now + WINDOW_SECONDS[window]) };
  };
  const h5 = part('5h');
  const w1 = part('1w');
  return {
    records_remaining_5h: h5.remaining,
    records_reset_5h: h5.reset,
    records_remaining_1w: w1.remaining,
    records_reset_1w: w1.reset,
  };
}

export function validateAmounts(category: string, records: unknown, requests: unknown): Result<Amounts> {
  if (!(CATEGORIES as readonly string[]).includes(category)) {
    return fail(
      'invalid_arguments',
      `category must be one of ${CATEGORIES.join(', ')} (got "${category.slice(0, 40)}").`,
    );
  }
  for (const [name, value] of [
    ['records', records],
    ['requests', requests],
  ] as const) {
    if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_AMOUNT) {
      return fail('invalid_arguments', `${name} must be a whole number from 0 to ${MAX_AMOUNT}.`);
    }
  }
  if (records === 0 && requests === 0)
    return fail('invalid_arguments', 'Nothing to record: records and requests are both 0.');
  return ok({ records: records as number, requests: requests as number });
}

/**
 * The windows a consumption touches: every window of each unit it uses, in the order of UNITS and
 * UNIT_WINDOWS. Written out slot by slot: on the metering path, lookups by a variable key
 * (`limits[category][unit][window]`) cost more than the rest of it.
 */
export function incrementsFor(limits: PlanLimits, category: Category, amounts: Amounts): Increment[] {
  const l = category === 'enrich' ? limits.enrich : limits.search;
  const increments: Increment[] = [];
  const { records, requests } = amounts;
  if (records > 0) {
    increments.push(increment(category, 'records', '5h', records, l.records['5h']));
    increments.push(increment(category, 'records', '1w', records, l.records['1w']));
  }
  if (requests > 0) increments.push(increment(category, 'requests', '5h', requests, l.requests['5h']));
  return increments;
}

function increment(
  category: Category,
  unit: Unit,
  window: WindowKey,
  amount: number,
  limit: number | undefined,
): Increment {
  return { category, unit, window, amount, limit: limit ?? 0, lengthSeconds: WINDOW_SECONDS[window] };
}

export interface Exceeded {
  slot: WindowSlot;
  limit: number;
  used: number;
  /** The end of the window that refused, or null when it is not running (the amount alone is over the limit). */
  resetsAt: EpochSeconds | null;
}

/** Why `inc` does not fit, given the windows as they stand now. */
export function exceededBy(inc: Increment, windows: readonly WindowState[], now: EpochSeconds): Exceeded {
  const current = windows.find((s) => sameSlot(s, inc));
  const running = isRunning(current, now);
  return {
    slot: { category: inc.category, unit: inc.unit, window: inc.window },
    limit: inc.limit,
    used: running ? current.used : 0,
    resetsAt: running ? current.endsAt : null,
  };
}

/** The failure a refused consumption answers with: the window and its reset time. */
export function exceededFailure(e: Exceeded) {
  const name = `${e.slot.category}.${e.slot.unit}.${e.slot.window}`;
  const resetsAt = e.resetsAt === null ? null : isoSeconds(e.resetsAt);
  const when = resetsAt ? `; it resets at ${resetsAt}` : '';
  return fail('fair_use_exceeded', `Fair-use quota ${name} (limit ${e.limit}) would be exceeded${when}.`, {
    window: name,
    limit: e.limit,
    used: e.used,
    resets_at: resetsAt,
  });
}

/**
 * Reference semantics of one consumption, all-or-nothing: either every window takes its amount
 * (starting the windows that are not running) or none does and the first window that would pass
 * its limit is named.
 */
export function applyConsumption(
  states: readonly WindowState[],
  increments: readonly Increment[],
  now: EpochSeconds,
): { ok: true; states: WindowState[] } | { ok: false; exceeded: Exceeded } {
  // A new array; the windows it changes are new objects, the others are shared (it mutates none).
  const next = states.slice();
  for (const inc of increments) {
    const at = next.findIndex((s) => sameSlot(s, inc));
    const current = at < 0 ? undefined : next[at];
    const running = isRunning(current, now);
    const base = running ? current.used : 0;
    if (base + inc.amount > inc.limit) return { ok: false, exceeded: exceededBy(inc, next, now) };
    const updated: WindowState = {
      category: inc.category,
      unit: inc.unit,
      window: inc.window,
      startedAt: running ? current.startedAt : now,
      endsAt: running ? current.endsAt : now + inc.lengthSeconds,
      used: base + inc.amount,
    };
    if (at < 0) next.push(updated);
    else next[at] = updated;
  }
  return { ok: true, states: next };
}
