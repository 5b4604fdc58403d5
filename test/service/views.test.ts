import { describe, expect, it } from 'vitest';
import type { WindowState } from '../../src/domain/fair-use.js';
import { getAccountParts, getAccountResponse } from '../../src/service/views.js';
import type { AccountSnapshot } from '../../src/store/store.js';

/** 2026-04-15T13:55:29Z, in epoch seconds. */
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;

function snapshot(windows: WindowState[]): AccountSnapshot {
  return {
    account: {
      id: 'acc_01m7zhzm4xabkjsrnrzvfpkg51',
      name: 'Acme "Labs"',
      planId: 'free',
      status: 'active',
      unlimitedOverride: null,
      tokenBalance: 120,
      createdAt: T - 86_400,
      updatedAt: T - 3_600,
      planSince: T - 3_600,
      lowBalance: null,
    },
    plan: {
      id: 'free',
      unlimited: false,
      limits: {
        enrich: { records: { '5h': 10, '1w': 15 }, requests: { '5h': 4 } },
        search: { records: { '5h': 6, '1w': 9 }, requests: { '5h': 3 } },
      },
    },
    apiKeyCount: 2,
    userCount: 1,
    windows,
  };
}

const w = (
  category: 'enrich' | 'search',
  unit: 'records' | 'requests',
  window: '5h' | '1w',
  endsAt: number,
  used: number,
): WindowState => ({
  category,
  unit,
  window,
  startedAt: endsAt - (window === '5h' ? 18_000 : 604_800),
  endsAt,
  used,
});

describe('getAccountParts', () => {
  it('puts together what getAccountResponse gives, for every second its head is good for', () => {
    const s = snapshot([
      w('enrich', 'records', '5h', T + 5, 7),
      w('enrich', 'requests', '5h', T + 5, 1),
      w('enrich', 'records', '1w', T + 9, 7),
      w('search', 'records', '5h', T - 2, 4), // ended before T
    ]);
    const parts = getAccountParts(s, T);
    expect(parts.from).toBe(T);
    expect(parts.until).toBe(T + 5); // the first end of a window running at T
    for (let t = T; t < parts.until; t++) {
      expect(parts.head + parts.tail(t)).toBe(JSON.stringify(getAccountResponse(s, t)));
    }
    // At `until` the enrich 5h windows have ended: the head made then differs from the old one.
    const later = getAccountParts(s, T + 5);
    expect(later.head).not.toBe(parts.head);
    expect(later.until).toBe(T + 9);
    expect(later.head + later.tail(T + 5)).toBe(JSON.stringify(getAccountResponse(s, T + 5)));
  });

  it('keeps its head indefinitely while no window runs, and moves only the metadata resets', () => {
    const s = snapshot([]);
    const parts = getAccountParts(s, T);
    expect(parts.until).toBe(Number.POSITIVE_INFINITY);
    for (const t of [T, T + 1, T + 18_000, T + 1_000_000]) {
      expect(parts.head + parts.tail(t)).toBe(JSON.stringify(getAccountResponse(s, t)));
    }
    expect(parts.tail(T)).not.toBe(parts.tail(T + 1));
  });
});
