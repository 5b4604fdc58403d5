import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accountOnPlan, type Harness, scratchServices } from '../helpers.js';

describe('consumptions committed together (one transaction, one fsync)', () => {
  let h: Harness;
  let accountId: string;
  beforeEach(async () => {
    h = await scratchServices();
    accountId = await accountOnPlan(h.services, { records5h: 100, records1w: 1000, requests5h: 1000 });
  });
  afterEach(async () => h.close());

  it('keeps each one all-or-nothing: a refused one in the batch leaves no trace, the others stand', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.services.usage.record(accountId, { category: 'enrich', records: 30 }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(results.filter((r) => !r.ok && r.error.code === 'fair_use_exceeded')).toHaveLength(17);
    const windows = (await h.store.accounts.snapshot(accountId))?.windows ?? [];
    const used = (unit: string, win: string) =>
      windows.find((w) => w.unit === unit && w.window === win)?.used;
    expect(used('records', '5h')).toBe(90);
    expect(used('records', '1w')).toBe(90);
    // The refused ones did not even count as requests.
    expect(used('requests', '5h')).toBe(3);
  });

  it('refused by a later window, leaves the earlier windows as they were, beside charged ones in the batch', async () => {
    // 100 records a week binds; the 5-hour window, checked first, would take them all.
    const id = await accountOnPlan(h.services, { records5h: 1000, records1w: 100, requests5h: 1000 });
    expect((await h.services.tokens.apply(id, { kind: 'grant', amount: 10 })).ok).toBe(true);
    const snapshot = (await h.store.accounts.snapshot(id))!;
    const charged = () =>
      h.services.usage.meter({
        snapshot,
        category: 'enrich',
        amounts: { records: 30, requests: 1 },
        tokenCost: 3,
        reason: 'test',
        render: () => null,
      });
    const plain = () => h.services.usage.record(id, { category: 'enrich', records: 30 });
    const oks = (results: { ok: boolean }[]) => results.filter((r) => r.ok).length;
    expect(oks(await Promise.all([charged(), charged()]))).toBe(2);
    // 60 records: one more batch of 30 fits the week, the second is refused by it (and the 5-hour
    // window, which it would fit, is not touched); then a charged one, refused the same way.
    expect(oks(await Promise.all([plain(), plain()]))).toBe(1);
    const refused = await charged();
    expect(!refused.ok && refused.error.code).toBe('fair_use_exceeded');
    const after = (await h.store.accounts.snapshot(id))!;
    const used = (unit: string, win: string) =>
      after.windows.find((w) => w.unit === unit && w.window === win)?.used;
    expect([used('records', '5h'), used('records', '1w'), used('requests', '5h')]).toEqual([90, 90, 3]);
    expect(after.account.tokenBalance).toBe(4);
    expect(await h.store.ledger.list(id, { limit: 10 })).toHaveLength(3);
  });

  it('counts one idempotency key once even within one batch, and answers alike', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        h.services.usage.record(accountId, { category: 'enrich', records: 5, idempotency_key: 'same' }),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.filter((r) => r.ok && r.value.replayed)).toHaveLength(9);
    expect(new Set(results.map((r) => r.ok && JSON.stringify(r.value.response))).size).toBe(1);
    const windows = (await h.store.accounts.snapshot(accountId))?.windows ?? [];
    expect(windows.find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(5);
  });
});
