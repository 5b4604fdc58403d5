/**
 * A consumption reads and writes its own category's windows only: the domain's lookups by category
 * agree with a plain search and keep the windows in key order; the read cache takes a PostgreSQL
 * consumption's categories into a cached snapshot without losing the others; migration 010 moves
 * PostgreSQL's array of windows into a member per category; and on both backends a consumption in
 * one category leaves every other category's windows as they were, stored as they were.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { applyConsumption, incrementsFor, type WindowState } from '../../src/domain/fair-use.js';
import { byWindowKey, categorySpan, findWindow } from '../../src/domain/fair-use-order.js';
import { DEFAULT_PLANS, type Plan } from '../../src/domain/plans.js';
import { ReadCache } from '../../src/store/read-cache.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { AccountSnapshot, Store } from '../../src/store/store.js';
import { accountRecord, scratchDir } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore } from '../postgres.js';
import { seededRandom } from '../seeded-random.js';

const postgres = await postgresAvailable();
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;

const w = (
  category: string,
  unit: string,
  window: string,
  used: number,
  startedAt = T - 60,
): WindowState => ({
  category,
  unit,
  window,
  startedAt,
  endsAt: startedAt + 86_400,
  used,
});

/** Four categories of several windows each, in key order. */
const PLAN: Plan = {
  id: 'many',
  unlimited: false,
  limits: {
    b_pages: { pages: { '1d': 1000, '30m': 500 }, requests: { '1h': 1000 } },
    a_mail: { messages: { '1d': 1000 } },
    d_ai: { tokens: { '1w': 1000 } },
    c_scrape: { pages: { '1d': 1000 } },
  },
};

describe('windows by category', () => {
  it('finds each window as a plain search does, and keeps key order as windows start', () => {
    const random = seededRandom(44);
    const categories = ['a', 'b', 'b_x', 'c', 'z'];
    const slots = categories.flatMap((c) =>
      ['pages', 'requests'].flatMap((u) =>
        ['1d', '1h', '30m'].map((x) => ({ category: c, unit: u, window: x })),
      ),
    );
    let windows: WindowState[] = [];
    for (let step = 0; step < 200; step++) {
      const s = slots[Math.floor(random() * slots.length)]!;
      const increments = [{ ...s, amount: 1, limit: 1_000_000, lengthSeconds: 3_600 }];
      const applied = applyConsumption(windows, increments, T + step);
      if (!applied.ok) throw new Error('refused');
      windows = applied.states;
      expect([...windows].sort(byWindowKey)).toEqual(windows);
      for (const probe of slots)
        expect(findWindow(windows, probe)).toBe(
          windows.find(
            (x) => x.category === probe.category && x.unit === probe.unit && x.window === probe.window,
          ),
        );
      for (const c of [...categories, 'aa', 'zz']) {
        const [start, end] = categorySpan(windows, c);
        expect(windows.slice(start, end)).toEqual(windows.filter((x) => x.category === c));
      }
    }
  });
});

describe('the read cache, given the categories a consumption read', () => {
  const snapshot = (windows: WindowState[]): AccountSnapshot => ({
    account: accountRecord(T, { id: 'acc_1', planId: 'many' }),
    plan: PLAN,
    apiKeyCount: 0,
    userCount: 0,
    windows,
  });
  const cached = () => [
    w('a', 'pages', '1d', 1),
    w('b', 'pages', '1d', 2),
    w('b', 'pages', '1h', 3),
    w('c', 'pages', '1d', 4),
  ];

  it('replaces those categories and keeps the others, in place when the windows are the same', () => {
    const cache = new ReadCache();
    const before = cached();
    cache.putSnapshot('acc_1', snapshot(before), cache.snapshotToken('acc_1'));
    cache.changed({
      account: 'acc_1',
      after: {
        windows: [w('b', 'pages', '1d', 20), w('b', 'pages', '1h', 30)],
        tokenBalance: 0,
        only: ['b'],
      },
    });
    const after = cache.snapshot('acc_1')!.windows;
    expect(after.map((x) => x.used)).toEqual([1, 20, 30, 4]);
    expect(after[0]).toBe(before[0]);
    expect(after[3]).toBe(before[3]);
  });

  it('takes a category with a window started, one new to the account, and one read empty', () => {
    const cache = new ReadCache();
    cache.putSnapshot('acc_1', snapshot(cached()), cache.snapshotToken('acc_1'));
    cache.changed({
      account: 'acc_1',
      after: {
        windows: [
          w('b', 'pages', '1d', 5),
          w('b', 'pages', '1h', 6),
          w('b', 'requests', '1h', 7),
          w('bb', 'x', '1d', 8),
        ],
        tokenBalance: 0,
        only: ['b', 'bb', 'c'],
      },
    });
    const after = cache.snapshot('acc_1')!.windows;
    expect(after.map((x) => `${x.category}.${x.unit}.${x.window}=${x.used}`)).toEqual([
      'a.pages.1d=1',
      'b.pages.1d=5',
      'b.pages.1h=6',
      'b.requests.1h=7',
      'bb.x.1d=8',
    ]);
  });
});

type Opened = { store: Store; cleanup: () => Promise<void> };

const backends: [string, boolean, () => Promise<Opened>][] = [
  [
    'SQLite',
    true,
    async () => {
      const dir = scratchDir();
      const store = new SqliteStore({ path: `${dir.dir}/t.db` });
      return {
        store,
        cleanup: async () => {
          await store.close();
          dir.cleanup();
        },
      };
    },
  ],
  [
    'PostgreSQL',
    postgres,
    async () => {
      const { store, cleanup } = scratchPostgresStore();
      return { store, cleanup };
    },
  ],
];

for (const [name, available, open] of backends) {
  describe.skipIf(!available)(`${name}: a consumption in one category`, () => {
    let opened: Opened | undefined;
    afterEach(async () => opened?.cleanup());

    it('leaves every other category as it was, and reads back what the reference semantics say', async () => {
      opened = await open();
      const { store } = opened;
      await store.migrate(DEFAULT_PLANS, T);
      await store.plans.put(PLAN, T);
      const acc = accountRecord(T, { id: 'acc_cat', planId: 'many' });
      await store.accounts.create(acc);
      let reference: WindowState[] = [];
      const steps: [string, Record<string, number>][] = [
        ['b_pages', { pages: 3, requests: 1 }],
        ['a_mail', { messages: 2 }],
        ['d_ai', { tokens: 7 }],
        ['c_scrape', { pages: 1 }],
        ['b_pages', { pages: 4, requests: 1 }],
        ['a_mail', { messages: 1 }],
      ];
      for (const [i, [category, amounts]] of steps.entries()) {
        const increments = incrementsFor(PLAN.limits, category, amounts);
        const outcome = await store.usage.commit({
          accountId: acc.id,
          increments,
          now: T + i,
          render: () => null,
        });
        expect(outcome.kind).toBe('committed');
        const applied = applyConsumption(reference, increments, T + i);
        if (!applied.ok) throw new Error('refused');
        reference = applied.states;
        expect((await store.accounts.snapshot(acc.id))!.windows).toEqual(reference);
      }
      expect(reference.map((x) => `${x.category}.${x.unit}.${x.window}=${x.used}`)).toEqual([
        'a_mail.messages.1d=3',
        'b_pages.pages.1d=7',
        'b_pages.pages.30m=7',
        'b_pages.requests.1h=2',
        'c_scrape.pages.1d=1',
        'd_ai.tokens.1w=7',
      ]);
    });
  });
}

describe.skipIf(!postgres)('PostgreSQL migration 010', () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => cleanup?.());

  it('moves an array of windows into a member per category, in key order, and consumes from it', async () => {
    const scratch = scratchPostgresStore();
    cleanup = scratch.cleanup;
    const { store, schema } = scratch;
    await store.migrate(DEFAULT_PLANS, T);
    await store.plans.put(PLAN, T);
    await store.accounts.create(accountRecord(T, { id: 'acc_old', planId: 'many' }));
    await store.accounts.create(accountRecord(T, { id: 'acc_none', planId: 'many' }));
    // As migration 007 left it: one array of every window, keyed members, in key order.
    const old = [
      w('a_mail', 'messages', '1d', 3),
      w('b_pages', 'pages', '1d', 7),
      w('b_pages', 'requests', '1h', 2),
      w('d_ai', 'tokens', '1w', 9),
    ];
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO ${schema}`);
      await client.query(`UPDATE accounts SET fair_use = $1::jsonb WHERE id = 'acc_old'`, [
        JSON.stringify(old),
      ]);
      await client.query(`UPDATE accounts SET fair_use = '[]'::jsonb WHERE id = 'acc_none'`);
      await client.query('DELETE FROM schema_migrations WHERE version = 10');
      expect((await store.migrate(DEFAULT_PLANS, T)).applied).toEqual(['010-fair-use-by-category']);
      const rows = await client.query(`SELECT id, fair_use::text AS f FROM accounts ORDER BY id`);
      expect(rows.rows.map((r) => [r.id, JSON.parse(r.f)])).toEqual([
        ['acc_none', {}],
        [
          'acc_old',
          {
            a_mail: [['messages', '1d', T - 60, T - 60 + 86_400, 3]],
            b_pages: [
              ['pages', '1d', T - 60, T - 60 + 86_400, 7],
              ['requests', '1h', T - 60, T - 60 + 86_400, 2],
            ],
            d_ai: [['tokens', '1w', T - 60, T - 60 + 86_400, 9]],
          },
        ],
      ]);
      expect((await store.accounts.snapshot('acc_old'))!.windows).toEqual(old);
      const increments = incrementsFor(PLAN.limits, 'b_pages', { pages: 1, requests: 1 });
      await store.usage.commit({ accountId: 'acc_old', increments, now: T, render: () => null });
      const after = await client.query(`SELECT fair_use::text AS f FROM accounts WHERE id = 'acc_old'`);
      const stored = JSON.parse(after.rows[0].f);
      expect(stored.a_mail).toEqual([['messages', '1d', T - 60, T - 60 + 86_400, 3]]);
      expect(stored.d_ai).toEqual([['tokens', '1w', T - 60, T - 60 + 86_400, 9]]);
      expect(stored.b_pages).toEqual([
        ['pages', '1d', T - 60, T - 60 + 86_400, 8],
        ['pages', '30m', T, T + 1_800, 1],
        ['requests', '1h', T - 60, T - 60 + 86_400, 3],
      ]);
    } finally {
      await client.end();
    }
  });
});
