import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isoSeconds } from '../../src/domain/clock.js';
import { accountOnPlan, type Harness, scratchServices, T0 } from '../helpers.js';

const END = Math.floor(T0 / 1000) + 18_000;

describe('a 5h window ending while consumptions race it (fixed clock)', () => {
  let h: Harness;
  let accountId: string;
  beforeEach(async () => {
    h = await scratchServices();
    accountId = await accountOnPlan(h.services, { records5h: 1000, records1w: 100_000, requests5h: 100 });
  });
  afterEach(async () => h.close());

  const consume = () => h.services.usage.record(accountId, { category: 'enrich', requests: 1 });

  it('counts each consumption in the window running when it commits, never more than the limit in either', async () => {
    // Fill the window that started at T0.
    const first = await Promise.all(Array.from({ length: 100 }, consume));
    expect(first.every((r) => r.ok)).toBe(true);

    // One second before the end: the full window refuses, naming its end.
    h.clock.set((END - 1) * 1000);
    const before = await Promise.all(Array.from({ length: 50 }, consume));
    for (const r of before) expect(!r.ok && r.error.details?.resets_at).toBe(isoSeconds(END));

    // The end arrives in the middle of a burst: consumptions started before the move may read
    // either time; each is judged by the window running when it commits.
    const burst = Array.from({ length: 75 }, consume);
    h.clock.set(END * 1000);
    burst.push(...Array.from({ length: 125 }, consume));
    const results = await Promise.all(burst);

    const granted = results.filter((r) => r.ok);
    const refused = results.filter((r) => !r.ok);
    // Whatever interleaving happened, the new window holds exactly its limit and no more.
    expect(granted).toHaveLength(100);
    expect(refused).toHaveLength(100);
    expect(before.every((r) => !r.ok)).toBe(true);
    for (const r of refused) expect(!r.ok && r.error.code).toBe('fair_use_exceeded');

    const view = await h.services.accounts.get(accountId);
    if (!view.ok) throw new Error('no account');
    // The new window started at the old one's end and ends a fixed length later.
    expect(view.value.fair_use.enrich.requests['5h']).toEqual({
      limit: 100,
      used: 100,
      remaining: 0,
      resets_at: isoSeconds(END + 18_000),
    });
    const row = (await h.store.accounts.snapshot(accountId))?.windows.find((w) => w.unit === 'requests');
    expect(row).toMatchObject({ startedAt: END, endsAt: END + 18_000, used: 100 });
  });

  it('does not move a running window when consumptions arrive later in it', async () => {
    await consume();
    for (const dt of [1, 600, 17_999]) {
      h.clock.set(T0 + dt * 1000);
      await consume();
      const row = (await h.store.accounts.snapshot(accountId))?.windows.find((w) => w.unit === 'requests');
      expect(row?.endsAt).toBe(END);
    }
  });
});
