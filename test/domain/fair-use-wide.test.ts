/**
 * A plan of many categories, units and windows: applyConsumption, the fair-use view and
 * `metadata.fair_use` (which find a category's windows once, by bisection, and search within them)
 * against a reference written the plain way (every window kept in a Map by its full name), over
 * random consumptions that start, fill, refuse and restart windows at random times.
 */
import { describe, expect, it } from 'vitest';
import {
  applyConsumption,
  fairUseMetadata,
  fairUseView,
  incrementsFor,
  type WindowState,
} from '../../src/domain/fair-use.js';
import { byWindowKey } from '../../src/domain/fair-use-order.js';
import { type PlanLimits, windowSeconds } from '../../src/domain/plans.js';

const T = 1_790_000_000;
// Names chosen so that key order differs from plan order and from length order.
const CATEGORIES = ['zeta', 'alpha', 'm10', 'm2', 'pages', 'b'];
const LIMITS: PlanLimits = Object.fromEntries(
  CATEGORIES.map((c, i) => [
    c,
    {
      records: { '1w': 40 + i, '5h': 12 + i },
      requests: { '1d': 9 + i, '90m': 4 },
      pages: { '30d': 25, '1h': 6 },
    },
  ]),
);

/** The reference: a window per `category.unit.window`, started by a consumption while not running. */
type Reference = Map<string, { startedAt: number; endsAt: number; used: number }>;

function referenceConsume(ref: Reference, category: string, amounts: Record<string, number>, now: number) {
  const touched: [string, number, number][] = [];
  for (const [unit, windows] of Object.entries(LIMITS[category]!)) {
    const amount = amounts[unit] ?? 0;
    if (amount <= 0) continue;
    for (const [window, limit] of Object.entries(windows)) {
      const name = `${category}.${unit}.${window}`;
      const w = ref.get(name);
      const used = w && now < w.endsAt ? w.used : 0;
      if (used + amount > limit) return name;
      touched.push([name, amount, windowSeconds(window)!]);
    }
  }
  for (const [name, amount, length] of touched) {
    const w = ref.get(name);
    if (w && now < w.endsAt) w.used += amount;
    else ref.set(name, { startedAt: now, endsAt: now + length, used: amount });
  }
  return undefined;
}

function draws(seed: number) {
  let x = seed;
  return (n: number) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

describe('a plan of many meters', () => {
  it('decides and renders every consumption as the plain reference does', () => {
    const next = draws(20_261_128);
    const ref: Reference = new Map();
    let states: WindowState[] = [];
    let now = T;
    let refused = 0;
    for (let i = 0; i < 3000; i++) {
      now += next(4000);
      const category = CATEGORIES[next(CATEGORIES.length)]!;
      const amounts = { records: next(4), requests: next(2), pages: next(3) };
      if (amounts.records + amounts.requests + amounts.pages === 0) amounts.pages = 1;
      const expected = referenceConsume(ref, category, amounts, now);
      const result = applyConsumption(states, incrementsFor(LIMITS, category, amounts), now);
      if (expected !== undefined) {
        refused++;
        expect(result.ok).toBe(false);
        if (!result.ok)
          expect(
            `${result.exceeded.slot.category}.${result.exceeded.slot.unit}.${result.exceeded.slot.window}`,
          ).toBe(expected);
        continue;
      }
      expect(result.ok).toBe(true);
      if (!result.ok) continue;
      states = result.states;
      // Kept in key order, one state per window ever started.
      expect([...states].sort(byWindowKey)).toEqual(states);
      expect(states.map((w) => `${w.category}.${w.unit}.${w.window}`)).toEqual(
        [...ref.keys()].sort((a, b) => {
          const [ca, ua, wa] = a.split('.');
          const [cb, ub, wb] = b.split('.');
          return byWindowKey(
            { category: ca!, unit: ua!, window: wa! },
            { category: cb!, unit: ub!, window: wb! },
          );
        }),
      );
      for (const w of states) expect(w).toMatchObject(ref.get(`${w.category}.${w.unit}.${w.window}`)!);
      // What get_account and a tool's metadata show, window by window.
      const view = fairUseView(LIMITS, states, now) as unknown as Record<
        string,
        Record<string, Record<string, { used: number; limit: number }>>
      >;
      for (const [c, units] of Object.entries(LIMITS))
        for (const [unit, windows] of Object.entries(units))
          for (const [window, limit] of Object.entries(windows)) {
            const r = ref.get(`${c}.${unit}.${window}`);
            const used = r && now < r.endsAt ? r.used : 0;
            expect(view[c]![unit]![window]).toMatchObject({ used, limit });
          }
      const meta = fairUseMetadata(LIMITS, states, category, now) as unknown as Record<string, number>;
      for (const [window, limit] of Object.entries(LIMITS[category]!.records!)) {
        const r = ref.get(`${category}.records.${window}`);
        expect(meta[`records_remaining_${window}`]).toBe(limit - (r && now < r.endsAt ? r.used : 0));
      }
    }
    // The run exercised refusals and restarts, not only grants.
    expect(refused).toBeGreaterThan(100);
    expect(states.length).toBe(CATEGORIES.length * 6);
  });
});
