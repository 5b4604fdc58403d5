import { describe, expect, it } from 'vitest';
import {
  applyLimitAssignments,
  DEFAULT_PLANS,
  limitOf,
  parseSlot,
  slotName,
  unitSingular,
  validateLimits,
  validatePlanId,
  WINDOW_SECONDS,
  WINDOW_SLOTS,
  windowSeconds,
} from '../../src/domain/plans.js';
import { limits } from '../helpers.js';

const ALL = [
  'enrich.records.5h=1',
  'enrich.records.1w=2',
  'enrich.requests.5h=3',
  'search.records.5h=4',
  'search.records.1w=5',
  'search.requests.5h=6',
];

describe('the default plan catalogue', () => {
  it('has exactly the figures of the product table', () => {
    expect(DEFAULT_PLANS).toEqual([
      { id: 'free', unlimited: false, limits: limits(100, 500, 500, 50, 250, 250) },
      {
        id: 'subscription_27',
        unlimited: false,
        limits: limits(1_000, 5_000, 5_000, 500, 2_500, 2_500),
        subscription: 'monthly',
      },
      {
        id: 'subscription_97',
        unlimited: true,
        limits: limits(15_000, 75_000, 75_000, 7_500, 37_500, 37_500),
        subscription: 'monthly',
      },
    ]);
  });

  it('passes its own limits validation', () => {
    for (const p of DEFAULT_PLANS) expect(validateLimits(p.limits)).toEqual({ ok: true, value: p.limits });
  });
});

describe('windows', () => {
  it('are 5h = 18,000 s and 1w = 604,800 s', () => {
    expect(WINDOW_SECONDS).toEqual({ '5h': 18_000, '1w': 604_800 });
  });

  it('are records 5h and 1w and requests 5h, per category', () => {
    expect(WINDOW_SLOTS.map(slotName)).toEqual([
      'enrich.records.5h',
      'enrich.records.1w',
      'enrich.requests.5h',
      'search.records.5h',
      'search.records.1w',
      'search.requests.5h',
    ]);
    expect(parseSlot('search.records.1w')).toEqual({ category: 'search', unit: 'records', window: '1w' });
    expect(parseSlot('enrich.requests.1w')).toBeUndefined();
    expect(limitOf(limits(1, 2, 3, 4, 5, 6), 'search', 'records', '1w')).toBe(5);
  });
});

describe('applyLimitAssignments', () => {
  it('builds a new plan that names every window', () => {
    expect(applyLimitAssignments(undefined, ALL)).toEqual({ ok: true, value: limits(1, 2, 3, 4, 5, 6) });
  });

  it('refuses a new plan that leaves a window out, and names it', () => {
    const result = applyLimitAssignments(undefined, ALL.slice(0, 5));
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.code).toBe('invalid_arguments');
      expect(result.error.message).toContain('search.requests.5h');
      expect(result.error.message).not.toContain('search.records.1w');
    }
  });

  it('changes only the named windows of an existing plan', () => {
    const base = limits(100, 500, 500, 50, 250, 250);
    expect(applyLimitAssignments(base, ['search.records.1w=9999', 'enrich.requests.5h=0'])).toEqual({
      ok: true,
      value: limits(100, 500, 0, 50, 9999, 250),
    });
    expect(applyLimitAssignments(base, [])).toEqual({ ok: true, value: base });
  });

  it('lets a later assignment of the same window win', () => {
    const result = applyLimitAssignments(undefined, [...ALL, 'enrich.records.5h=42']);
    expect(result.ok && result.value.enrich?.records?.['5h']).toBe(42);
  });

  it.each([
    'enrich.records.5h:100',
    'enrich.records.5h=',
    'enrich.records.5h=-1',
    'enrich.records.5h=1.5',
    'enrich.records.5h=1e3',
    'enrich.records.2x=1',
    'enrich.records.0h=1',
    'enrich.records.367d=1',
    'People.records.5h=1',
    'constructor.records.5h=1',
    'enrich.records=1',
    ' enrich.records.5h=1',
    'enrich.records.5h=99999999999999999999',
  ])('refuses the assignment %j', (assignment) => {
    const result = applyLimitAssignments(limits(1, 2, 3, 4, 5, 6), [assignment]);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('invalid_arguments');
  });
});

describe('validateLimits', () => {
  it('refuses limits with a window missing, negative or fractional', () => {
    const missing = { ...limits(1, 2, 3, 4, 5, 6), search: { records: { '5h': 4 }, requests: { '5h': 6 } } };
    expect(validateLimits(missing).ok).toBe(false);
    expect(validateLimits(limits(1, 2, 3, 4, -5, 6)).ok).toBe(false);
    expect(validateLimits(limits(1, 2, 3.5, 4, 5, 6)).ok).toBe(false);
    expect(validateLimits(null).ok).toBe(false);
  });

  it("keeps the meters of the operator's own, in the plan's order", () => {
    const extra = { ...limits(1, 2, 3, 4, 5, 6), people: { records: { '5h': 1 } } };
    const result = validateLimits(extra);
    expect(result).toEqual({ ok: true, value: extra });
    expect(result.ok && JSON.stringify(result.value)).toBe(JSON.stringify(extra));
  });
});

describe('validatePlanId', () => {
  it('accepts lower-case ids with digits, "_" and "-", up to 64 characters', () => {
    for (const id of ['free', 'subscription_27', 'team-2', 'a'.repeat(64)])
      expect(validatePlanId(id).ok).toBe(true);
  });

  it('refuses empty, upper-case, spaced, leading "_" and overlong ids', () => {
    for (const id of ['', 'Free', 'pro plan', '_x', 'a'.repeat(65)])
      expect(validatePlanId(id).ok).toBe(false);
  });
});

describe("meters of the operator's own", () => {
  it('a new plan names only its meters, and any window <n>m, h, d or w', () => {
    const result = applyLimitAssignments(undefined, [
      'scrape.pages.1d=2000',
      'scrape.requests.1h=500',
      'mail.messages.30m=9',
    ]);
    expect(result).toEqual({
      ok: true,
      value: { scrape: { pages: { '1d': 2000 }, requests: { '1h': 500 } }, mail: { messages: { '30m': 9 } } },
    });
    expect(windowSeconds('30m')).toBe(1_800);
    expect(windowSeconds('2w')).toBe(1_209_600);
    expect(windowSeconds('366d')).toBe(366 * 86_400);
    for (const bad of ['0h', '1y', '5', 'h5', '1.5h', '367d', '53w'])
      expect(windowSeconds(bad)).toBeUndefined();
  });

  it('adds a meter to a default plan after its own, and =none removes one', () => {
    const base = limits(1, 2, 3, 4, 5, 6);
    const added = applyLimitAssignments(base, ['enrich.pages.1d=7', 'scrape.pages.1d=8']);
    expect(added.ok && Object.keys(added.value)).toEqual(['enrich', 'search', 'scrape']);
    expect(added.ok && Object.keys(added.value.enrich!)).toEqual(['records', 'requests', 'pages']);
    const removed = applyLimitAssignments(added.ok ? added.value : base, [
      'scrape.pages.1d=none',
      'enrich.pages.1d=none',
    ]);
    expect(removed).toEqual({ ok: true, value: base });
    const custom = applyLimitAssignments({ scrape: { pages: { '1d': 1, '1h': 2 } } }, [
      'scrape.pages.1d=none',
    ]);
    expect(custom).toEqual({ ok: true, value: { scrape: { pages: { '1h': 2 } } } });
  });

  it('refuses a plan with no limit, or one that meters a default category without all six', () => {
    const empty = applyLimitAssignments({ scrape: { pages: { '1d': 1 } } }, ['scrape.pages.1d=none']);
    expect(!empty.ok && empty.error.message).toContain('at least one limit');
    const partial = applyLimitAssignments(undefined, ['scrape.pages.1d=1', 'enrich.records.5h=1']);
    expect(!partial.ok && partial.error.message).toContain('missing: enrich.records.1w');
    const removedDefault = applyLimitAssignments(limits(1, 2, 3, 4, 5, 6), ['search.requests.5h=none']);
    expect(!removedDefault.ok && removedDefault.error.message).toContain('missing: search.requests.5h');
  });

  it('refuses more than 16 categories, 4 units or 4 windows in a category, and two windows of one length', () => {
    const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));
    const cats = applyLimitAssignments(
      undefined,
      many(17, (i) => `c${i}.pages.1d=1`),
    );
    expect(!cats.ok && cats.error.message).toBe('A plan has at most 16 categories (got 17).');
    expect(
      applyLimitAssignments(
        undefined,
        many(16, (i) => `c${i}.pages.1d=1`),
      ).ok,
    ).toBe(true);
    const units = applyLimitAssignments(
      undefined,
      many(5, (i) => `c.u${i}.1d=1`),
    );
    expect(!units.ok && units.error.message).toBe('Category c has at most 4 units (got 5).');
    const windows = applyLimitAssignments(
      undefined,
      many(5, (i) => `c.u${i % 2}.${i + 1}d=1`),
    );
    expect(!windows.ok && windows.error.message).toBe('Category c has at most 4 windows (got 5).');
    const same = applyLimitAssignments(undefined, ['c.pages.1h=1', 'c.pages.60m=2']);
    expect(!same.ok && same.error.message).toContain('two windows of the same length');
  });

  it('names what is wrong with a bad name in the limits JSON', () => {
    const bad = validateLimits({ Scrape: { pages: { '1d': 1 } } });
    expect(!bad.ok && bad.error.message).toContain('category "Scrape" must match');
    const window = validateLimits({ scrape: { pages: { '1y': 1 } } });
    expect(!window.ok && window.error.message).toContain('window "1y" must be <n>m, <n>h, <n>d or <n>w');
    expect(validateLimits({ scrape: { pages: [] } }).ok).toBe(false);
    expect(validateLimits({ scrape: { pages: { '1d': -1 } } }).ok).toBe(false);
  });
});

describe('unitSingular', () => {
  it('names one of a unit, for prices and labels', () => {
    const one = (units: string[]) => units.map(unitSingular);
    expect(
      one(['records', 'pages', 'messages', 'requests', 'queries', 'batches', 'boxes', 'addresses']),
    ).toEqual(['record', 'page', 'message', 'request', 'query', 'batch', 'box', 'address']);
    expect(one(['kb', 'mail', 's', 'access'])).toEqual(['kb', 'mail', 's', 'access']);
  });
});
