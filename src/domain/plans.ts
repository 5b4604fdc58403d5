/**
 * @module Plans: an id, its fair-use limits per (category, unit, window) in the plan's order, and
 * whether it is unlimited. The seed system's two categories, two units and two windows are the
 * defaults; an operator names their own meters with the same shape.
 */
import catalogue from './default-plans.json' with { type: 'json' };
import { fail, ok, type Result } from './errors.js';

/** A category name: `[a-z][a-z0-9_]{0,31}` (checked where it comes in: validateLimits). */
export type Category = string;
/** `requests` (one per call), `records` or a unit the operator names, by the same rule as categories. */
export type Unit = string;
/** `<n>m`, `<n>h`, `<n>d` or `<n>w`. */
export type WindowKey = string;

/** The seed system's categories, units and windows: the default plans' meters. */
export const CATEGORIES = ['enrich', 'search'] as const;
export const UNITS = ['records', 'requests'] as const;
export const WINDOW_SECONDS: Readonly<Record<string, number>> = { '5h': 18_000, '1w': 604_800 };
export const UNIT_WINDOWS = { records: ['5h', '1w'], requests: ['5h'] } as const;

/** Limits by category, unit and window; JSON objects keep the plan's order of each. */
export type PlanLimits = Record<Category, Record<Unit, Record<WindowKey, number>>>;
export type CategoryLimits = PlanLimits[Category];

export interface Plan {
  id: string;
  unlimited: boolean;
  limits: PlanLimits;
  /** A subscription billed monthly: each account on it has a monthly period from when it joined. */
  subscription?: 'monthly' | null;
  /** The recurring Stripe price that sells it (docs/payments.md); absent: not for sale. */
  stripePrice?: string | null;
  /** Tokens granted for each paid period of its subscription (each invoice paid); absent: none. */
  periodTokens?: number | null;
  /** What customers see instead of the id; absent: the id. */
  name?: string | null;
  description?: string | null;
}

export interface MeterSlot {
  category: Category;
  unit: Unit;
  window: WindowKey;
}

/** The default (category, unit, window) slots, in the order the spec lists them. */
export const WINDOW_SLOTS: ReadonlyArray<MeterSlot> = CATEGORIES.flatMap((category) =>
  UNITS.flatMap((unit) => UNIT_WINDOWS[unit].map((window) => ({ category, unit, window }))),
);

/** The most meters a plan may name: categories, units per category, windows per category. */
export const MAX_CATEGORIES = 16;
export const MAX_UNITS = 4;
export const MAX_WINDOWS = 4;
/** The longest window: a year of 366 days. */
const MAX_WINDOW_SECONDS = 366 * 86_400;

const NAME = /^[a-z][a-z0-9_]{0,31}$/;
const WINDOW = /^([1-9][0-9]{0,5})([mhdw])$/;
const UNIT_SECONDS: Record<string, number> = { m: 60, h: 3_600, d: 86_400, w: 604_800 };

/** A window's length in seconds, or undefined when it is not `<n>m|h|d|w` up to a year. */
export function windowSeconds(window: string): number | undefined {
  const known = WINDOW_SECONDS[window];
  if (known !== undefined) return known;
  const m = WINDOW.exec(window);
  if (!m) return undefined;
  const seconds = Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  return seconds <= MAX_WINDOW_SECONDS ? seconds : undefined;
}

/**
 * One of a unit, for prices and labels ("per page", "1 page"): units are named in the plural
 * (records, pages, messages, queries, batches); a name that is not ends as it is.
 */
export function unitSingular(unit: Unit): string {
  if (unit.length > 3 && unit.endsWith('ies')) return `${unit.slice(0, -3)}y`;
  if (/(?:ss|x|ch|sh)es$/.test(unit)) return unit.slice(0, -2);
  if (unit.length > 1 && unit.endsWith('s') && !unit.endsWith('ss')) return unit.slice(0, -1);
  return unit;
}

export function limitOf(limits: PlanLimits, category: Category, unit: Unit, window: WindowKey): number {
  return limits[category]?.[unit]?.[window] ?? 0;
}

/** Every slot a plan limits, in the plan's order. */
export function planSlots(limits: PlanLimits): MeterSlot[] {
  const slots: MeterSlot[] = [];
  for (const [category, units] of Object.entries(limits))
    for (const [unit, windows] of Object.entries(units))
      for (const window of Object.keys(windows)) slots.push({ category, unit, window });
  return slots;
}

export const DEFAULT_PLANS: readonly Plan[] = catalogue.plans as Plan[];

const PLAN_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export function validatePlanId(id: string): Result<string> {
  return PLAN_ID.test(id)
    ? ok(id)
    : fail('invalid_arguments', `Plan id "${id}" must be 1-64 characters of a-z, 0-9, "_" or "-".`);
}

/** Names an object already has (`constructor`...): never a meter's, so a lookup never finds them. */
const RESERVED = new Set(Object.getOwnPropertyNames(Object.prototype));

/** Whether `value` may name a category (or a unit). */
export function isCategory(value: string): boolean {
  return NAME.test(value) && !RESERVED.has(value);
}

/** `enrich.records.5h` -> its default slot, or undefined. */
export function parseSlot(name: string): MeterSlot | undefined {
  return WINDOW_SLOTS.find((s) => slotName(s) === name);
}

export function slotName(slot: MeterSlot): string {
  return `${slot.category}.${slot.unit}.${slot.window}`;
}

function isLimit(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The reason `slot` cannot be a meter, or undefined when its names are good. */
function badSlot(slot: MeterSlot): string | undefined {
  if (!isCategory(slot.category))
    return `category "${slot.category.slice(0, 40)}" must match [a-z][a-z0-9_]{0,31} (and not be ${RESERVED_HINT})`;
  if (!isCategory(slot.unit))
    return `unit "${slot.unit.slice(0, 40)}" must match [a-z][a-z0-9_]{0,31} (and not be ${RESERVED_HINT})`;
  if (windowSeconds(slot.window) === undefined)
    return `window "${slot.window.slice(0, 40)}" must be <n>m, <n>h, <n>d or <n>w, at most a year (366d)`;
  return undefined;
}

const RESERVED_HINT = 'a name such as constructor or toString';

const ASSIGNMENT = /^([^.=\s]+)\.([^.=\s]+)\.([^.=\s]+)=(\d{1,16}|none)$/;

/**
 * Builds a plan's limits from assignments such as `scrape.pages.1d=2000` (`=none` removes that
 * limit), on top of `base` (an existing plan's limits), keeping the plan's order and adding new
 * meters after it.
 */
export function applyLimitAssignments(
  base: PlanLimits | undefined,
  assignments: string[],
): Result<PlanLimits> {
  const limits: PlanLimits = base ? (JSON.parse(JSON.stringify(base)) as PlanLimits) : {};
  for (const a of assignments) {
    const m = ASSIGNMENT.exec(a);
    if (!m)
      return fail(
        'invalid_arguments',
        `Limit "${a.slice(0, 80)}" must look like enrich.records.5h=1000 (<category>.<unit>.<window>=<n>, or =none to remove it).`,
      );
    const slot = { category: m[1]!, unit: m[2]!, window: m[3]! };
    const bad = badSlot(slot);
    if (bad) return fail('invalid_arguments', `Limit "${a.slice(0, 80)}": ${bad}.`);
    if (m[4] === 'none') {
      removeLimit(limits, slot);
      continue;
    }
    const n = Number(m[4]);
    if (!isLimit(n)) return fail('invalid_arguments', `Limit "${a}" is not a whole number >= 0.`);
    const units = limits[slot.category] ?? {};
    const windows = units[slot.unit] ?? {};
    windows[slot.window] = n;
    units[slot.unit] = windows;
    limits[slot.category] = units;
  }
  return checkMeters(limits);
}

function removeLimit(limits: PlanLimits, s: MeterSlot): void {
  const units = limits[s.category];
  const windows = units?.[s.unit];
  if (!units || !windows) return;
  delete windows[s.window];
  if (Object.keys(windows).length === 0) delete units[s.unit];
  if (Object.keys(units).length === 0) delete limits[s.category];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Checks a limits object that came from outside (JSON): good names, whole numbers >= 0, the counts. */
export function validateLimits(value: unknown): Result<PlanLimits> {
  if (!isObject(value))
    return fail(
      'invalid_arguments',
      'limits must be an object: {"<category>": {"<unit>": {"<window>": n}}}.',
    );
  const limits: PlanLimits = {};
  for (const [category, units] of Object.entries(value)) {
    if (!isObject(units)) return fail('invalid_arguments', `limits.${category} must be an object of units.`);
    const byUnit: CategoryLimits = {};
    for (const [unit, windows] of Object.entries(units)) {
      if (!isObject(windows))
        return fail('invalid_arguments', `limits.${category}.${unit} must be an object of windows.`);
      const byWindow: Record<WindowKey, number> = {};
      for (const [window, limit] of Object.entries(windows)) {
        const slot = { category, unit, window };
        const bad = badSlot(slot);
        if (bad) return fail('invalid_arguments', `limits.${slotName(slot).slice(0, 120)}: ${bad}.`);
        if (!isLimit(limit))
          return fail('invalid_arguments', `limits.${slotName(slot)} must be a whole number >= 0.`);
        byWindow[window] = limit;
      }
      byUnit[unit] = byWindow;
    }
    limits[category] = byUnit;
  }
  return checkMeters(limits);
}

/**
 * The rules on a whole plan: at least one limit; at most 16 categories, each with at most 4 units
 * and 4 windows, no two windows of a unit the same length; and a plan that meters a default
 * category has all six default limits (what the seed system's clients read of it).
 */
function checkMeters(limits: PlanLimits): Result<PlanLimits> {
  const categories = Object.keys(limits);
  if (categories.length === 0)
    return fail('invalid_arguments', 'A plan needs at least one limit, such as enrich.records.5h=1000.');
  if (categories.length > MAX_CATEGORIES)
    return fail(
      'invalid_arguments',
      `A plan has at most ${MAX_CATEGORIES} categories (got ${categories.length}).`,
    );
  for (const category of categories) {
    const units = Object.entries(limits[category]!);
    if (units.length === 0) return fail('invalid_arguments', `limits.${category} names no unit.`);
    if (units.length > MAX_UNITS)
      return fail(
        'invalid_arguments',
        `Category ${category} has at most ${MAX_UNITS} units (got ${units.length}).`,
      );
    const lengths = new Set<number>();
    for (const [unit, windows] of units) {
      const own = new Set<number>();
      const names = Object.keys(windows);
      if (names.length === 0) return fail('invalid_arguments', `limits.${category}.${unit} names no window.`);
      for (const w of names) {
        const seconds = windowSeconds(w)!;
        if (own.has(seconds))
          return fail(
            'invalid_arguments',
            `${category}.${unit} has two windows of the same length (${names.join(', ')}).`,
          );
        own.add(seconds);
        lengths.add(seconds);
      }
    }
    if (lengths.size > MAX_WINDOWS)
      return fail(
        'invalid_arguments',
        `Category ${category} has at most ${MAX_WINDOWS} windows (got ${lengths.size}).`,
      );
  }
  if (CATEGORIES.some((c) => c in limits)) {
    const missing = WINDOW_SLOTS.filter((s) => limits[s.category]?.[s.unit]?.[s.window] === undefined);
    if (missing.length > 0)
      return fail(
        'invalid_arguments',
        `A plan that meters enrich or search needs every default limit; missing: ${missing.map(slotName).join(', ')}.`,
      );
  }
  return ok(limits);
}
