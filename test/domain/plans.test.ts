import { describe, expect, it } from 'vitest';
import {
  applyLimitAssignments,
  DEFAULT_PLANS,
  limitOf,
  parseSlot,
  slotName,
  validateLimits,
  validatePlanId,
  WINDOW_SECONDS,
  WINDOW_SLOTS,
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
    expect(result.ok && result.value.enrich.records['5h']).toBe(42);
  });

  it.each([
    'enrich.records.5h:100',
    'enrich.records.5h=',
    'enrich.records.5h=-1',
    'enrich.records.5h=1.5',
    'enrich.records.5h=1e3',
    'enrich.records.2h=1',
    'enrich.requests.1w=1',
    'people.records.5h=1',
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

  it('keeps only the known windows', () => {
    const extra = { ...limits(1, 2, 3, 4, 5, 6), people: { records: { '5h': 1 } } };
    expect(validateLimits(extra)).toEqual({ ok: true, value: limits(1, 2, 3, 4, 5, 6) });
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
