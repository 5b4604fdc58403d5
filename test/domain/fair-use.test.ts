import { describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/domain/clock.js';
import {
  type Amounts,
  applyConsumption,
  checkKnown,
  exceededFailure,
  fairUseMetadata,
  fairUseView,
  incrementsFor,
  MAX_AMOUNT,
  validateAmounts,
  viewWindow,
  type WindowState,
} from '../../src/domain/fair-use.js';
import {
  CATEGORIES,
  type Category,
  limitOf,
  type PlanLimits,
  UNIT_WINDOWS,
  UNITS,
  WINDOW_SECONDS,
} from '../../src/domain/plans.js';

/** 2026-04-15T13:55:29Z, in epoch seconds. */
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;
const H5 = 18_000;
const W1 = 604_800;

const LIMITS: PlanLimits = {
  enrich: { records: { '5h': 10, '1w': 15 }, requests: { '5h': 4 } },
  search: { records: { '5h': 6, '1w': 9 }, requests: { '5h': 3 } },
};

/** Applies one consumption and returns the states after it, failing the test if it was refused. */
function consume(
  states: readonly WindowState[],
  category: Category,
  amounts: Amounts,
  now: number,
  limits: PlanLimits = LIMITS,
): WindowState[] {
  const result = applyConsumption(states, incrementsFor(limits, category, amounts), now);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.exceeded)}`);
  return result.states;
}

const view = (states: readonly WindowState[], now: number, limits: PlanLimits = LIMITS) =>
  fairUseView(limits, states, now);

describe('a fair-use window that never ran', () => {
  it('reports used 0, remaining = limit and resets_at null', () => {
    expect(view([], T).enrich.records['5h']).toEqual({ limit: 10, used: 0, remaining: 10, resets_at: null });
    expect(view([], T).search.requests['5h']).toEqual({ limit: 3, used: 0, remaining: 3, resets_at: null });
  });

  it('shows records 5h and 1w and requests 5h for both categories, and nothing else', () => {
    const v = view([], T);
    expect(Object.keys(v)).toEqual(['enrich', 'search']);
    for (const c of ['enrich', 'search'] as const) {
      expect(Object.keys(v[c])).toEqual(['records', 'requests']);
      expect(Object.keys(v[c].records)).toEqual(['5h', '1w']);
      expect(Object.keys(v[c].requests)).toEqual(['5h']);
    }
  });
});

describe('a fair-use window while it runs', () => {
  it('starts at the first consumption and resets one length later (5h = 18,000 s, 1w = 604,800 s)', () => {
    const states = consume([], 'enrich', { records: 3, requests: 1 }, T);
    const v = view(states, T);
    expect(v.enrich.records['5h']).toEqual({
      limit: 10,
      used: 3,
      remaining: 7,
      resets_at: isoSeconds(T + H5),
    });
    expect(v.enrich.records['1w']).toEqual({
      limit: 15,
      used: 3,
      remaining: 12,
      resets_at: isoSeconds(T + W1),
    });
    expect(v.enrich.requests['5h']).toEqual({
      limit: 4,
      used: 1,
      remaining: 3,
      resets_at: isoSeconds(T + H5),
    });
    expect(isoSeconds(T + H5)).toBe('2026-04-15T18:55:29Z');
    expect(isoSeconds(T + W1)).toBe('2026-04-22T13:55:29Z');
  });

  it('counts later consumptions without ever moving resets_at', () => {
    let states = consume([], 'enrich', { records: 2, requests: 1 }, T);
    states = consume(states, 'enrich', { records: 3, requests: 1 }, T + 3_600);
    states = consume(states, 'enrich', { records: 1, requests: 0 }, T + H5 - 1);
    const v = view(states, T + H5 - 1);
    expect(v.enrich.records['5h']).toEqual({
      limit: 10,
      used: 6,
      remaining: 4,
      resets_at: isoSeconds(T + H5),
    });
    expect(v.enrich.records['1w'].resets_at).toBe(isoSeconds(T + W1));
    expect(v.enrich.requests['5h'].used).toBe(2);
    const h5 = states.find((s) => s.unit === 'records' && s.window === '5h');
    expect(h5).toMatchObject({ startedAt: T, endsAt: T + H5, used: 6 });
  });

  it('is still running one second before its end', () => {
    const states = consume([], 'enrich', { records: 4, requests: 1 }, T);
    expect(view(states, T + H5 - 1).enrich.records['5h']).toMatchObject({
      used: 4,
      resets_at: isoSeconds(T + H5),
    });
  });

  it('does not touch the other category', () => {
    const states = consume([], 'enrich', { records: 4, requests: 1 }, T);
    expect(view(states, T).search).toEqual(view([], T).search);
  });
});

describe('a fair-use window at and after its end', () => {
  it('is over at exactly its end: used 0, remaining = limit, resets_at null', () => {
    const states = consume([], 'enrich', { records: 9, requests: 1 }, T);
    expect(view(states, T + H5).enrich.records['5h']).toEqual({
      limit: 10,
      used: 0,
      remaining: 10,
      resets_at: null,
    });
    const h5 = states.find((s) => s.unit === 'records' && s.window === '5h');
    expect(viewWindow(10, h5, T + H5)).toEqual({ limit: 10, used: 0, remaining: 10, resets_at: null });
    expect(viewWindow(10, h5, T + H5 - 1)).toMatchObject({ used: 9, resets_at: isoSeconds(T + H5) });
  });

  it('starts a new window at the moment of the next consumption made at exactly the end', () => {
    let states = consume([], 'enrich', { records: 9, requests: 1 }, T);
    // 9 + 6 would not fit a 10-record 5h window that was still running.
    states = consume(states, 'enrich', { records: 6, requests: 0 }, T + H5);
    const h5 = states.find((s) => s.category === 'enrich' && s.unit === 'records' && s.window === '5h');
    expect(h5).toMatchObject({ startedAt: T + H5, endsAt: T + 2 * H5, used: 6 });
    expect(view(states, T + H5).enrich.records['5h']).toEqual({
      limit: 10,
      used: 6,
      remaining: 4,
      resets_at: isoSeconds(T + 2 * H5),
    });
    expect(view(states, T + H5).enrich.records['1w']).toMatchObject({
      used: 15,
      resets_at: isoSeconds(T + W1),
    });
  });

  it('starts a new window at the moment of a consumption made long after the end', () => {
    let states = consume([], 'enrich', { records: 9, requests: 1 }, T);
    const later = T + H5 + 12_345;
    states = consume(states, 'enrich', { records: 1, requests: 1 }, later);
    expect(view(states, later).enrich.records['5h']).toEqual({
      limit: 10,
      used: 1,
      remaining: 9,
      resets_at: isoSeconds(later + H5),
    });
  });

  it('keeps the 1w window running after the 5h one ended, with its own resets_at', () => {
    let states = consume([], 'enrich', { records: 7, requests: 1 }, T);
    let v = view(states, T + H5);
    expect(v.enrich.records['5h']).toMatchObject({ used: 0, resets_at: null });
    expect(v.enrich.records['1w']).toEqual({
      limit: 15,
      used: 7,
      remaining: 8,
      resets_at: isoSeconds(T + W1),
    });

    states = consume(states, 'enrich', { records: 5, requests: 1 }, T + H5 + 60);
    v = view(states, T + H5 + 60);
    expect(v.enrich.records['5h']).toMatchObject({ used: 5, resets_at: isoSeconds(T + H5 + 60 + H5) });
    expect(v.enrich.records['1w']).toMatchObject({ used: 12, resets_at: isoSeconds(T + W1) });
  });

  it('ends the 1w window at exactly one week', () => {
    const states = consume([], 'enrich', { records: 7, requests: 1 }, T);
    expect(view(states, T + W1 - 1).enrich.records['1w'].used).toBe(7);
    expect(view(states, T + W1).enrich.records['1w']).toEqual({
      limit: 15,
      used: 0,
      remaining: 15,
      resets_at: null,
    });
  });
});

describe('a consumption', () => {
  it('of an enrich call returning 7 records touches requests.5h +1, records.5h +7 and records.1w +7', () => {
    const big: PlanLimits = {
      enrich: { records: { '5h': 1000, '1w': 5000 }, requests: { '5h': 5000 } },
      search: { records: { '5h': 500, '1w': 2500 }, requests: { '5h': 2500 } },
    };
    const increments = incrementsFor(big, 'enrich', { records: 7, requests: 1 });
    expect(increments).toHaveLength(3);
    expect(increments).toEqual(
      expect.arrayContaining([
        { category: 'enrich', unit: 'requests', window: '5h', amount: 1, limit: 5000, lengthSeconds: H5 },
        { category: 'enrich', unit: 'records', window: '5h', amount: 7, limit: 1000, lengthSeconds: H5 },
        { category: 'enrich', unit: 'records', window: '1w', amount: 7, limit: 5000, lengthSeconds: W1 },
      ]),
    );
    const v = view(consume([], 'enrich', { records: 7, requests: 1 }, T, big), T, big);
    expect(v.enrich.requests['5h'].used).toBe(1);
    expect(v.enrich.records['5h'].used).toBe(7);
    expect(v.enrich.records['1w'].used).toBe(7);
    expect(v.search).toEqual(view([], T, big).search);
  });

  it('touches every window of each unit it uses, in the order the plans module declares them', () => {
    for (const category of CATEGORIES) {
      for (const amounts of [
        { records: 3, requests: 1 },
        { records: 0, requests: 2 },
        { records: 5, requests: 0 },
      ]) {
        const declared = UNITS.filter((unit) => amounts[unit] > 0).flatMap((unit) =>
          UNIT_WINDOWS[unit].map((window) => ({
            category,
            unit,
            window,
            amount: amounts[unit],
            limit: limitOf(LIMITS, category, unit, window),
            lengthSeconds: WINDOW_SECONDS[window],
          })),
        );
        expect(incrementsFor(LIMITS, category, amounts)).toEqual(declared);
      }
    }
  });

  it('of requests only touches only the requests window', () => {
    const increments = incrementsFor(LIMITS, 'search', { records: 0, requests: 2 });
    expect(increments).toEqual([
      { category: 'search', unit: 'requests', window: '5h', amount: 2, limit: 3, lengthSeconds: H5 },
    ]);
  });

  it('that fills a window exactly to its limit is accepted', () => {
    const states = consume([], 'enrich', { records: 10, requests: 4 }, T);
    expect(view(states, T).enrich.records['5h']).toMatchObject({ used: 10, remaining: 0 });
    expect(view(states, T).enrich.requests['5h']).toMatchObject({ used: 4, remaining: 0 });
  });

  it('is all-or-nothing: when 5h has room but 1w does not, nothing changes and enrich.records.1w is named', () => {
    let states = consume([], 'enrich', { records: 10, requests: 1 }, T);
    states = consume(states, 'enrich', { records: 5, requests: 1 }, T + H5);
    const before = structuredClone(states);
    const now = T + H5 + 60;
    // records.5h holds 5 of 10 and requests.5h 1 of 4, but records.1w holds 15 of 15.
    const result = applyConsumption(
      states,
      incrementsFor(LIMITS, 'enrich', { records: 1, requests: 1 }),
      now,
    );
    expect(result).toEqual({
      ok: false,
      exceeded: {
        slot: { category: 'enrich', unit: 'records', window: '1w' },
        limit: 15,
        used: 15,
        resetsAt: T + W1,
      },
    });
    expect(states).toEqual(before);
    const failure = result.ok ? undefined : exceededFailure(result.exceeded);
    expect(failure).toEqual({
      ok: false,
      error: {
        code: 'fair_use_exceeded',
        message: expect.stringContaining('enrich.records.1w'),
        details: { window: 'enrich.records.1w', limit: 15, used: 15, resets_at: isoSeconds(T + W1) },
      },
    });
    expect(failure?.ok === false && failure.error.message).toContain(isoSeconds(T + W1));
  });

  it('that is refused leaves every window it would have touched unchanged, including new ones', () => {
    const states = consume([], 'search', { records: 2, requests: 1 }, T);
    const result = applyConsumption(
      states,
      incrementsFor(LIMITS, 'search', { records: 1, requests: 3 }),
      T + 1,
    );
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.exceeded.slot).toEqual({ category: 'search', unit: 'requests', window: '5h' });
    expect(view(states, T + 1).search.records['5h'].used).toBe(2);
  });

  it('does not change the states it was given when it is accepted (it returns new ones)', () => {
    const states = consume([], 'enrich', { records: 1, requests: 1 }, T);
    const before = structuredClone(states);
    consume(states, 'enrich', { records: 2, requests: 1 }, T + 1);
    expect(states).toEqual(before);
  });

  it('larger than the limit on a fresh window is refused with resetsAt null', () => {
    const result = applyConsumption([], incrementsFor(LIMITS, 'enrich', { records: 11, requests: 0 }), T);
    expect(result).toEqual({
      ok: false,
      exceeded: {
        slot: { category: 'enrich', unit: 'records', window: '5h' },
        limit: 10,
        used: 0,
        resetsAt: null,
      },
    });
    if (!result.ok) {
      const failure = exceededFailure(result.exceeded);
      expect(failure.ok === false && failure.error.details).toMatchObject({ resets_at: null });
      expect(failure.ok === false && failure.error.message).not.toMatch(/resets at/);
    }
  });

  it('larger than the limit on a window that has ended is refused with resetsAt null and used 0', () => {
    const states = consume([], 'enrich', { records: 3, requests: 1 }, T);
    const result = applyConsumption(
      states,
      incrementsFor(LIMITS, 'enrich', { records: 11, requests: 0 }),
      T + H5,
    );
    expect(!result.ok && result.exceeded).toMatchObject({ used: 0, resetsAt: null });
  });
});

describe('remaining', () => {
  it('is never negative, even when the plan limit is lowered below what was used', () => {
    const states = consume([], 'enrich', { records: 9, requests: 3 }, T);
    const lowered: PlanLimits = {
      ...LIMITS,
      enrich: { records: { '5h': 5, '1w': 6 }, requests: { '5h': 1 } },
    };
    const v = view(states, T + 10, lowered);
    expect(v.enrich.records['5h']).toEqual({
      limit: 5,
      used: 9,
      remaining: 0,
      resets_at: isoSeconds(T + H5),
    });
    expect(v.enrich.records['1w'].remaining).toBe(0);
    expect(v.enrich.requests['5h'].remaining).toBe(0);
    expect(fairUseMetadata(lowered, states, 'enrich', T + 10)).toMatchObject({
      records_remaining_5h: 0,
      records_remaining_1w: 0,
    });
    const result = applyConsumption(
      states,
      incrementsFor(lowered, 'enrich', { records: 0, requests: 1 }),
      T + 10,
    );
    expect(!result.ok && result.exceeded).toMatchObject({ limit: 1, used: 3, resetsAt: T + H5 });
  });
});

describe('metadata.fair_use', () => {
  it('reports remaining = limit and now + length for windows that are not running', () => {
    expect(fairUseMetadata(LIMITS, [], 'enrich', T)).toEqual({
      records_remaining_5h: 10,
      records_reset_5h: isoSeconds(T + H5),
      records_remaining_1w: 15,
      records_reset_1w: isoSeconds(T + W1),
    });
  });

  it('reports the running window’s remaining and its end', () => {
    const states = consume([], 'search', { records: 4, requests: 1 }, T);
    expect(fairUseMetadata(LIMITS, states, 'search', T + 100)).toEqual({
      records_remaining_5h: 2,
      records_reset_5h: isoSeconds(T + H5),
      records_remaining_1w: 5,
      records_reset_1w: isoSeconds(T + W1),
    });
  });

  it('reports now + 5h once the 5h window is over while the 1w one still runs', () => {
    const states = consume([], 'enrich', { records: 4, requests: 1 }, T);
    const now = T + H5 + 7;
    expect(fairUseMetadata(LIMITS, states, 'enrich', now)).toEqual({
      records_remaining_5h: 10,
      records_reset_5h: isoSeconds(now + H5),
      records_remaining_1w: 11,
      records_reset_1w: isoSeconds(T + W1),
    });
  });

  it('summarises only the category it is asked about', () => {
    const states = consume([], 'enrich', { records: 4, requests: 1 }, T);
    expect(fairUseMetadata(LIMITS, states, 'search', T).records_remaining_5h).toBe(6);
  });

  it("summarises the unit it is asked about, named after it, in the plan's order", () => {
    const team: PlanLimits = {
      scrape: { records: { '1d': 100 }, pages: { '1h': 5, '1d': 20 }, requests: { '1h': 10 } },
    };
    const states = consume([], 'scrape', { pages: 3, requests: 1 }, T, team);
    const pages = fairUseMetadata(team, states, 'scrape', T + 60, 'pages');
    expect(Object.keys(pages)).toEqual([
      'pages_remaining_1h',
      'pages_reset_1h',
      'pages_remaining_1d',
      'pages_reset_1d',
    ]);
    expect(pages).toEqual({
      pages_remaining_1h: 2,
      pages_reset_1h: isoSeconds(T + 3_600),
      pages_remaining_1d: 17,
      pages_reset_1d: isoSeconds(T + 86_400),
    });
    // Records by default, as get_account asks; a unit the category does not limit: nothing.
    expect(fairUseMetadata(team, states, 'scrape', T)).toEqual({
      records_remaining_1d: 100,
      records_reset_1d: isoSeconds(T + 86_400),
    });
    expect(fairUseMetadata(team, states, 'scrape', T, 'messages')).toEqual({});
  });

  it('answers the default plans in records exactly their four members, whatever else the category has', () => {
    const states = consume([], 'enrich', { records: 2, requests: 1 }, T);
    const meta = fairUseMetadata(LIMITS, states, 'enrich', T, 'records');
    expect(Object.keys(meta)).toEqual([
      'records_remaining_5h',
      'records_reset_5h',
      'records_remaining_1w',
      'records_reset_1w',
    ]);
    expect(meta.records_remaining_5h).toBe(8);
  });
});

describe('validateAmounts', () => {
  it('accepts whole numbers from 0 to MAX_AMOUNT with at least one of them above 0', () => {
    expect(validateAmounts('enrich', { records: 7, requests: 1 })).toEqual({
      ok: true,
      value: { records: 7, requests: 1 },
    });
    expect(validateAmounts('search', { records: 0, requests: MAX_AMOUNT })).toEqual({
      ok: true,
      value: { records: 0, requests: MAX_AMOUNT },
    });
    expect(validateAmounts('scrape', { pages: 3, requests: 1 })).toEqual({
      ok: true,
      value: { pages: 3, requests: 1 },
    });
  });

  it.each([
    ['no category', '', 1, 1],
    ['negative records', 'enrich', -1, 1],
    ['fractional records', 'enrich', 1.5, 1],
    ['records given as a string', 'enrich', '3', 1],
    ['requests above MAX_AMOUNT', 'enrich', 1, MAX_AMOUNT + 1],
    ['both amounts 0', 'enrich', 0, 0],
  ])('refuses %s', (_label, category, records, requests) => {
    const result = validateAmounts(category, { records, requests });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('invalid_arguments');
  });
});

describe('checkKnown', () => {
  const custom = { scrape: { pages: { '1d': 10 }, requests: { '1h': 5 } } };

  it('accepts a category and units the plan limits, and requests or a 0 amount anywhere', () => {
    expect(checkKnown(LIMITS, 'enrich', { records: 1, requests: 1 }).ok).toBe(true);
    expect(checkKnown(custom, 'scrape', { pages: 2, requests: 1 }).ok).toBe(true);
    expect(checkKnown(custom, 'scrape', { records: 0, requests: 1 }).ok).toBe(true);
  });

  it('refuses an unknown category or unit, naming the known ones', () => {
    const category = checkKnown(LIMITS, 'people', { records: 1 });
    expect(!category.ok && category.error.message).toBe(
      'category must be one of enrich, search (got "people").',
    );
    const unit = checkKnown(custom, 'scrape', { records: 3, requests: 1 });
    expect(!unit.ok && unit.error.message).toBe(
      'unit must be one of pages, requests for scrape (got "records").',
    );
    expect(checkKnown(custom, 'constructor', { pages: 1 }).ok).toBe(false);
  });
});
