/**
 * @module Fair-use windows. A window starts at the first consumption made while it is not running
 * and ends a fixed length later; its end never moves. This module is the reference semantics: the
 * stores implement `consume` as conditional statements and are tested against it.
 */
import { type EpochSeconds, isoSeconds } from './clock.js';
import { fail, ok, type Result } from './errors.js';
import { byWindowKey, categorySpan, findWindow, indexInSpan, windowInSpan } from './fair-use-order.js';
import { type CompiledSlot, categoryShape, type MetadataSlot, metadataSlots } from './fair-use-shape.js';
import type { WindowSlot, WindowState } from './fair-use-window.js';
import type { Category, PlanLimits, Unit, WindowKey } from './plans.js';

export type { WindowSlot, WindowState } from './fair-use-window.js';

export interface WindowView {
  limit: number;
  used: number;
  remaining: number;
  resets_at: string | null;
}

/** A category's windows by unit and window, in the plan's order. */
export type CategoryView = Record<Unit, Record<WindowKey, WindowView>>;
/** Every category's windows, in the plan's order. */
export type MetersView = Record<Category, CategoryView>;

/** A category as the default plans have it: the shape the seed system's clients are typed for. */
export interface DefaultCategoryView {
  records: { '5h': WindowView; '1w': WindowView };
  requests: { '5h': WindowView };
}
/**
 * get_account's `fair_use`, typed as the default plans answer it (the client's hand-written types
 * match it); a plan of the operator's own meters answers its own members by the same rule (MetersView).
 */
export type FairUseView = Record<'enrich' | 'search', DefaultCategoryView>;

/**
 * `metadata.fair_use`, typed as the default plans answer it: `records_remaining_<window>` and
 * `records_reset_<window>` of each records window of the category, in the plan's order (a tool
 * counting another unit: `<unit>_remaining_<window>` and `<unit>_reset_<window>` of that unit's).
 */
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

/** What a consumption counts, by unit (`records`, `requests`, or a unit of the operator's). */
export type Amounts = Readonly<Record<Unit, number>>;

/** The most one consumption may carry in a unit: far above any plan, far below float trouble. */
export const MAX_AMOUNT = 1_000_000_000;

export function isRunning(state: WindowState | undefined, now: EpochSeconds): state is WindowState {
  return state !== undefined && now < state.endsAt;
}

export function sameSlot(a: WindowSlot, b: WindowSlot): boolean {
  return a.category === b.category && a.unit === b.unit && a.window === b.window;
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

/** Every category, unit and window of the plan, in the plan's order. */
export function fairUseView(
  limits: PlanLimits,
  states: readonly WindowState[],
  now: EpochSeconds,
): FairUseView {
  const view: MetersView = {};
  for (const category of Object.keys(limits)) view[category] = categoryView(limits, states, category, now);
  return view as unknown as FairUseView;
}

/** One category of the fair-use view (a consumption's answer shows only its own). */
export function categoryView(
  limits: PlanLimits,
  states: readonly WindowState[],
  category: Category,
  now: EpochSeconds,
): CategoryView {
  const shape = categoryShape(limits, category);
  const [start, end] = categorySpan(states, category);
  if (shape.seedShape) {
    // The default plans' shape written out: literal members cost less than keyed ones, and this is
    // rendered on every get_account answered from memory and every consumption's answer.
    const [r5h, r1w, q5h] = shape.slots as [CompiledSlot, CompiledSlot, CompiledSlot];
    const seed: DefaultCategoryView = {
      records: {
        '5h': viewWindow(r5h.limit, windowInSpan(states, start, end, 'records', '5h'), now),
        '1w': viewWindow(r1w.limit, windowInSpan(states, start, end, 'records', '1w'), now),
      },
      requests: { '5h': viewWindow(q5h.limit, windowInSpan(states, start, end, 'requests', '5h'), now) },
    };
    return seed as unknown as CategoryView;
  }
  const view: CategoryView = {};
  for (const { unit, windows } of shape.units) {
    const byWindow: Record<WindowKey, WindowView> = {};
    for (const w of windows)
      byWindow[w.window] = viewWindow(w.limit, windowInSpan(states, start, end, unit, w.window), now);
    view[unit] = byWindow;
  }
  return view;
}

/**
 * `metadata.fair_use`: the windows of a category's `unit` (records unless told: get_account's, and a
 * records tool's), in the plan's order, as `<unit>_remaining_<window>` and `<unit>_reset_<window>`
 * (none: empty); a window not running resets a full length from now.
 */
export function fairUseMetadata(
  limits: PlanLimits,
  states: readonly WindowState[],
  category: Category,
  now: EpochSeconds,
  unit: Unit = 'records',
): FairUseMetadata {
  const shape = categoryShape(limits, category);
  const [start, end] = categorySpan(states, category);
  if (unit === 'records' && shape.seedMetadata) {
    // The default plans' shape written out: named members cost less than keyed ones, and this is
    // rendered on every get_account answered from memory.
    const [s5h, s1w] = shape.seedMetadata;
    const h5 = metadataPart(s5h, windowInSpan(states, start, end, 'records', '5h'), now);
    const w1 = metadataPart(s1w, windowInSpan(states, start, end, 'records', '1w'), now);
    return {
      records_remaining_5h: h5.remaining,
      records_reset_5h: h5.reset,
      records_remaining_1w: w1.remaining,
      records_reset_1w: w1.reset,
    };
  }
  const meta: Record<string, number | string> = {};
  for (const m of metadataSlots(shape, unit)) {
    const state = windowInSpan(states, start, end, unit, m.window);
    const running = isRunning(state, now);
    meta[m.remainingKey] = running ? Math.max(0, m.limit - state.used) : m.limit;
    meta[m.resetKey] = isoSeconds(running ? state.endsAt : now + m.lengthSeconds);
  }
  return meta as unknown as FairUseMetadata;
}

function metadataPart(m: MetadataSlot, state: WindowState | undefined, now: EpochSeconds) {
  return isRunning(state, now)
    ? { remaining: Math.max(0, m.limit - state.used), reset: isoSeconds(state.endsAt) }
    : { remaining: m.limit, reset: isoSeconds(now + m.lengthSeconds) };
}

/** The plan's first category: the one get_account's `metadata.fair_use` summarises. */
export function firstCategory(limits: PlanLimits): Category {
  for (const category in limits) return category;
  return '';
}

/**
 * The shapes of a consumption's amounts: whole numbers from 0 to MAX_AMOUNT, not all 0. Whether the
 * plan knows the category and units is for checkKnown, once the account is read.
 */
export function validateAmounts(category: string, amounts: Record<Unit, unknown>): Result<Amounts> {
  if (typeof category !== 'string' || category.length === 0)
    return fail('invalid_arguments', 'category must be a category of the plan, such as enrich.');
  const checked: Record<Unit, number> = {};
  let total = 0;
  // for...in over own members, not Object.entries: no array per call on the metered path.
  for (const name in amounts) {
    if (!Object.hasOwn(amounts, name)) continue;
    const value = amounts[name];
    if (!Number.isSafeInteger(value) || (value as number) < 0 || (value as number) > MAX_AMOUNT) {
      return fail('invalid_arguments', `${name} must be a whole number from 0 to ${MAX_AMOUNT}.`);
    }
    checked[name] = value as number;
    total += value as number;
  }
  if (total === 0) return fail('invalid_arguments', 'Nothing to record: every amount is 0.');
  return ok(checked);
}

/**
 * The plan knows the category, and each unit given an amount (besides requests, counted only where
 * the plan limits them); else the refusal names the ones it knows.
 */
export function checkKnown(limits: PlanLimits, category: Category, amounts: Amounts): Result<void> {
  const units = Object.hasOwn(limits, category) ? limits[category] : undefined;
  if (!units)
    return fail(
      'invalid_arguments',
      `category must be one of ${Object.keys(limits).join(', ')} (got "${category.slice(0, 40)}").`,
    );
  for (const unit in amounts) {
    if (!Object.hasOwn(amounts, unit)) continue;
    if (unit === 'requests' || amounts[unit] === 0 || Object.hasOwn(units, unit)) continue;
    return fail(
      'invalid_arguments',
      `unit must be one of ${Object.keys(units).join(', ')} for ${category} (got "${unit.slice(0, 40)}").`,
    );
  }
  return ok(undefined);
}

/**
 * The windows a consumption touches: every window the plan limits of each unit it counts, in the
 * plan's order. A unit or category the plan does not limit is not metered.
 */
export function incrementsFor(limits: PlanLimits, category: Category, amounts: Amounts): Increment[] {
  const increments: Increment[] = [];
  for (const s of categoryShape(limits, category).slots) {
    const amount = amounts[s.unit];
    if (amount === undefined || amount <= 0) continue;
    increments.push({
      category,
      unit: s.unit,
      window: s.window,
      amount,
      limit: s.limit,
      lengthSeconds: s.lengthSeconds,
    });
  }
  return increments;
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
  const current = findWindow(windows, inc);
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
 * its limit is named. `states` in key order (as the stores read them); so are the states answered.
 */
export function applyConsumption(
  states: readonly WindowState[],
  increments: readonly Increment[],
  now: EpochSeconds,
): { ok: true; states: WindowState[] } | { ok: false; exceeded: Exceeded } {
  // A new array; the windows it changes are new objects, the others are shared (it mutates none).
  const next = states.slice();
  // The span of the increments' category (found once: a consumption's increments share one).
  let category: Category | undefined;
  let start = 0;
  let end = 0;
  for (const inc of increments) {
    if (inc.category !== category) {
      category = inc.category;
      [start, end] = categorySpan(next, category);
    }
    const at = indexInSpan(next, start, end, inc.unit, inc.window);
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
    if (at < 0) {
      next.splice(insertionPoint(next, start, end, updated), 0, updated);
      end++;
    } else next[at] = updated;
  }
  return { ok: true, states: next };
}

/** Where a window not yet started goes among its category's, `windows[start, end)`, in key order. */
function insertionPoint(windows: readonly WindowState[], start: number, end: number, w: WindowState): number {
  let i = start;
  while (i < end && byWindowKey(windows[i]!, w) < 0) i++;
  return i;
}
