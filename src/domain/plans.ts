/** @module Plans: an id, its fair-use limits per category, unit and window, and whether it is unlimited. */
import catalogue from './default-plans.json' with { type: 'json' };
import { fail, ok, type Result } from './errors.js';

export const CATEGORIES = ['enrich', 'search'] as const;
export type Category = (typeof CATEGORIES)[number];

export const UNITS = ['records', 'requests'] as const;
export type Unit = (typeof UNITS)[number];

export type WindowKey = '5h' | '1w';

export const WINDOW_SECONDS: Record<WindowKey, number> = { '5h': 18_000, '1w': 604_800 };

/** The windows each unit has, as the spec shows them. */
export const UNIT_WINDOWS = { records: ['5h', '1w'], requests: ['5h'] } as const satisfies Record<
  Unit,
  readonly WindowKey[]
>;

export interface CategoryLimits {
  records: { '5h': number; '1w': number };
  requests: { '5h': number };
}
export type PlanLimits = Record<Category, CategoryLimits>;

export interface Plan {
  id: string;
  unlimited: boolean;
  limits: PlanLimits;
  /** A subscription billed monthly: each account on it has a monthly period from when it joined. */
  subscription?: 'monthly' | null;
}

/** Every (category, unit, window) slot, in the order the spec lists them. */
export const WINDOW_SLOTS: ReadonlyArray<{ category: Category; unit: Unit; window: WindowKey }> =
  CATEGORIES.flatMap((category) =>
    UNITS.flatMap((unit) => UNIT_WINDOWS[unit].map((window) => ({ category, unit, window }))),
  );

export function limitOf(limits: PlanLimits, category: Category, unit: Unit, window: WindowKey): number {
  const byWindow = limits[category][unit] as Record<string, number>;
  return byWindow[window] ?? 0;
}

export const DEFAULT_PLANS: readonly Plan[] = catalogue.plans as Plan[];

const PLAN_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export function validatePlanId(id: string): Result<string> {
  return PLAN_ID.test(id)
    ? ok(id)
    : fail('invalid_arguments', `Plan id "${id}" must be 1-64 characters of a-z, 0-9, "_" or "-".`);
}

export function isCategory(value: string): value is Category {
  return (CATEGORIES as readonly string[]).includes(value);
}

/** `enrich.records.5h` -> its slot, or undefined. */
export function parseSlot(name: string): { category: Category; unit: Unit; window: WindowKey } | undefined {
  return WINDOW_SLOTS.find((s) => `${s.category}.${s.unit}.${s.window}` === name);
}

export function slotName(slot: { category: Category; unit: Unit; window: WindowKey }): string {
  return `${slot.category}.${slot.unit}.${slot.window}`;
}

function isLimit(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Builds a plan's limits from assignments such as `enrich.records.5h=1000`, on top of `base`
 * (an existing plan's limits). A new plan (no base) must name every window.
 */
export function applyLimitAssignments(
  base: PlanLimits | undefined,
  assignments: string[],
): Result<PlanLimits> {
  const values = new Map<string, number>();
  if (base)
    for (const s of WINDOW_SLOTS) values.set(slotName(s), limitOf(base, s.category, s.unit, s.window));
  for (const a of assignments) {
    const m = /^([a-z]+\.[a-z]+\.[0-9a-z]+)=(\d+)$/.exec(a);
    const slot = m ? parseSlot(m[1]!) : undefined;
    if (!m || !slot) {
      const names = WINDOW_SLOTS.map(slotName).join(', ');
      return fail(
        'invalid_arguments',
        `Limit "${a}" must look like enrich.records.5h=1000 (windows: ${names}).`,
      );
    }
    const n = Number(m[2]);
    if (!isLimit(n)) return fail('invalid_arguments', `Limit "${a}" is not a whole number >= 0.`);
    values.set(slotName(slot), n);
  }
  const missing = WINDOW_SLOTS.map(slotName).filter((n) => !values.has(n));
  if (missing.length > 0)
    return fail('invalid_arguments', `A new plan needs every limit; missing: ${missing.join(', ')}.`);
  return ok(limitsFromMap(values));
}

function limitsFromMap(values: Map<string, number>): PlanLimits {
  const get = (c: Category, u: Unit, w: WindowKey) => values.get(`${c}.${u}.${w}`) ?? 0;
  const cat = (c: Category): CategoryLimits => ({
    records: { '5h': get(c, 'records', '5h'), '1w': get(c, 'records', '1w') },
    requests: { '5h': get(c, 'requests', '5h') },
  });
  return { enrich: cat('enrich'), search: cat('search') };
}

/** `value[a][b][c]`, or undefined where any step is not an object. */
function pick(value: unknown, ...path: string[]): unknown {
  let v = value;
  for (const p of path)
    v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

/** Checks a limits object that came from outside (JSON): every window present, whole numbers >= 0. */
export function validateLimits(value: unknown): Result<PlanLimits> {
  const values = new Map<string, number>();
  for (const s of WINDOW_SLOTS) {
    const v = pick(value, s.category, s.unit, s.window);
    if (!isLimit(v)) return fail('invalid_arguments', `limits.${slotName(s)} must be a whole number >= 0.`);
    values.set(slotName(s), v);
  }
  return ok(limitsFromMap(values));
}
