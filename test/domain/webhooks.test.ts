import { describe, expect, it } from 'vitest';
import { incrementsFor } from '../../src/domain/fair-use.js';
import {
  balanceEvents,
  endpointWants,
  RETRY_DELAYS_SECONDS,
  retryDelay,
  thresholdEvents,
  validateEndpoint,
} from '../../src/domain/webhooks.js';

const T = 1_776_261_329;
let n = 0;
const stamp = () => ({ id: `msg_${++n}`, at: T });
const limits = {
  enrich: { records: { '5h': 10, '1w': 1000 }, requests: { '5h': 100 } },
  search: { records: { '5h': 1, '1w': 1 }, requests: { '5h': 1 } },
};

describe('validateEndpoint', () => {
  it('takes http(s) URLs, known events and whole percentages, with defaults', () => {
    expect(validateEndpoint({ url: 'https://h.example/x' })).toEqual({
      ok: true,
      value: {
        url: 'https://h.example/x',
        events: expect.arrayContaining(['fair_use.threshold', 'key.revoked']),
        thresholds: [80, 100],
      },
    });
    expect(
      validateEndpoint({ url: 'http://h.example', events: ['tokens.depleted'], thresholds: [100, 50, 50] }),
    ).toMatchObject({
      ok: true,
      value: { events: ['tokens.depleted'], thresholds: [50, 100] },
    });
  });

  it.each([
    [{}, /url is required/],
    [{ url: 'not a url' }, /not a URL/],
    [{ url: 'ftp://h.example/x' }, /http:\/\/ or https:\/\/, not ftp:/],
    [{ url: 'file:///etc/passwd' }, /not file:/],
    [{ url: 'https://u:p@h.example/' }, /credentials/],
    [{ url: 'https://h.example', events: ['fair_use.treshold'] }, /unknown event "fair_use.treshold"/],
    [{ url: 'https://h.example', events: [] }, /non-empty list/],
    [{ url: 'https://h.example', thresholds: [0] }, /from 1 to 100, not 0/],
    [{ url: 'https://h.example', thresholds: [101, 50.5] }, /not 101, 50.5/],
    [{ url: 'https://h.example', thresholds: '80' }, /non-empty list/],
  ])('refuses %j', (input, message) => {
    const r = validateEndpoint(input);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.message).toMatch(message);
  });
});

describe('thresholdEvents', () => {
  const incs = incrementsFor(limits, 'enrich', { records: 3, requests: 1 });
  const after = [
    {
      category: 'enrich' as const,
      unit: 'records' as const,
      window: '5h' as const,
      startedAt: T,
      endsAt: T + 18_000,
      used: 9,
    },
  ];
  it('fires each threshold between the use before and after, and no other', () => {
    const events = thresholdEvents(
      'acc_1',
      incs,
      (i) => (i.unit === 'records' && i.window === '5h' ? 6 : 0),
      after,
      [50, 80, 90, 100],
      stamp,
    );
    expect(
      events.map((e) => [e.data.unit, e.data.window, e.data.threshold, e.data.used, e.data.resets_at]),
    ).toEqual([
      ['records', '5h', 80, 9, '2026-04-15T18:55:29Z'],
      ['records', '5h', 90, 9, '2026-04-15T18:55:29Z'],
    ]);
  });
  it('fires nothing for a use already past the threshold, nor below it', () => {
    expect(thresholdEvents('acc_1', incs, () => 8, after, [80], stamp)).toEqual([]);
    expect(thresholdEvents('acc_1', incs, () => 0, after, [80], stamp)).toEqual([]);
  });
});

describe('balanceEvents', () => {
  it('fires low balance on the way down through the setting, depleted at 0', () => {
    expect(balanceEvents('a', 60, 40, 50, stamp).map((e) => e.type)).toEqual(['tokens.low_balance']);
    expect(balanceEvents('a', 40, 30, 50, stamp)).toEqual([]);
    expect(balanceEvents('a', 50, 0, 50, stamp).map((e) => e.type)).toEqual([
      'tokens.low_balance',
      'tokens.depleted',
    ]);
    expect(balanceEvents('a', 5, 0, null, stamp).map((e) => e.type)).toEqual(['tokens.depleted']);
    expect(balanceEvents('a', 0, 10, 50, stamp)).toEqual([]);
    expect(balanceEvents('a', 0, 0, null, stamp)).toEqual([]);
  });
});

describe('retryDelay', () => {
  it('grows through the schedule within 20% either way, then stops', () => {
    expect(RETRY_DELAYS_SECONDS.reduce((a, b) => a + b, 0) / 3600).toBeCloseTo(27.6, 1);
    expect(retryDelay(1, () => 0)).toBe(4);
    expect(retryDelay(1, () => 0.999999)).toBe(6);
    expect(retryDelay(2, () => 0.5)).toBe(300);
    expect(retryDelay(7, () => 0)).toBe(28_800);
    expect(retryDelay(8)).toBeNull();
  });
});

describe('endpointWants', () => {
  const ep = {
    id: 'whe_1',
    url: 'https://x',
    accountId: 'acc_1',
    events: ['fair_use.threshold' as const],
    thresholds: [80],
    createdAt: T,
  };
  const ev = (accountId: string, threshold: number) => ({
    id: 'msg_1',
    type: 'fair_use.threshold' as const,
    accountId,
    at: T,
    data: { threshold },
  });
  it('matches its account, its events and its thresholds', () => {
    expect(endpointWants(ep, ev('acc_1', 80))).toBe(true);
    expect(endpointWants(ep, ev('acc_1', 100))).toBe(false);
    expect(endpointWants(ep, ev('acc_2', 80))).toBe(false);
    expect(endpointWants({ ...ep, accountId: null }, ev('acc_2', 80))).toBe(true);
  });
});
