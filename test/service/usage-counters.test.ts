/**
 * The usage counters against a real SQLite store: counted in memory, written by flush as additive
 * rows, read back with what is not written yet, a day's end, an account's hours, and counts kept (not
 * lost, not doubled) when a write fails and written by the next flush.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BillingService } from '../../src/service/billing.js';
import { UsageCounters } from '../../src/service/usage-counters.js';
import { type Harness, scratchServices } from '../helpers.js';

describe('usage counters', () => {
  let h: Harness;
  let counters: UsageCounters;
  beforeEach(async () => {
    h = await scratchServices();
    counters = new UsageCounters(h.store.usageHistory, h.clock);
  });
  afterEach(async () => h.close());

  const hit = { kind: 'answered', records: 2, tokens: 3, missed: false } as const;
  const stored = (by: 'day' | 'key' | 'tool' = 'day') =>
    h.store.usageHistory.history('acc_a', '2026-01-01', '2026-12-31', by);

  it('counts in memory, answers unwritten counts, and writes them once', async () => {
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    counters.count('acc_a', 'key_1', 'find', 'mcp', hit);
    counters.count('acc_a', 'key_2', 'find', 'http', { kind: 'failed' });
    counters.answered('acc_a', 'key_1', 'get_account', 'http', undefined);
    expect(counters.unwritten('acc_a', '2026-04-15', '2026-04-15', 'key')).toEqual([
      { group: 'key_1', calls: 3, tokens: 6, records: 4, withData: 2, withoutData: 1, failed: 0 },
      { group: 'key_2', calls: 1, tokens: 0, records: 0, withData: 0, withoutData: 0, failed: 1 },
    ]);
    expect(await stored()).toEqual([]);
    await counters.flush();
    expect(counters.unwritten('acc_a', '2026-04-15', '2026-04-15', 'day')).toEqual([]);
    expect(await stored()).toEqual([
      { group: '2026-04-15', calls: 4, tokens: 6, records: 4, withData: 2, withoutData: 1, failed: 1 },
    ]);
    // Counted again after a flush: a new row added to the stored one, not the written one counted twice.
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    await counters.flush();
    await counters.flush();
    expect((await stored())[0]?.calls).toBe(5);
  });

  it('counts calls made while a write is under way exactly once', async () => {
    const total = async () =>
      ((await stored())[0]?.calls ?? 0) +
      (counters.unwritten('acc_a', '2026-04-15', '2026-04-15', 'day')[0]?.calls ?? 0);
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    const writing = counters.flush();
    // Counted before the write takes the row, while it prunes, and while it waits for the disk.
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    await Promise.resolve();
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    setImmediate(() => counters.count('acc_a', 'key_1', 'find', 'http', hit));
    await writing;
    await new Promise((r) => setImmediate(r));
    expect(await total()).toBe(4);
    await counters.flush();
    await counters.flush();
    expect((await stored())[0]?.calls).toBe(4);
    expect(counters.unwritten('acc_a', '2026-04-15', '2026-04-15', 'day')).toEqual([]);
  });

  it('a call after midnight UTC is counted on the new day', async () => {
    h.clock.set(Date.UTC(2026, 3, 15, 23, 59, 59, 900));
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    h.clock.advance(1);
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    await counters.flush();
    expect((await stored()).map((g) => [g.group, g.calls])).toEqual([
      ['2026-04-15', 1],
      ['2026-04-16', 2],
    ]);
  });

  it("counts each account's calls by the hour, written with the days, and an hour's end starts the next", async () => {
    h.clock.set(Date.UTC(2026, 3, 15, 13, 59, 59, 500));
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    counters.count('acc_a', 'key_2', 'other', 'mcp', { kind: 'failed' });
    counters.count('acc_b', 'key_3', 'find', 'http', hit);
    h.clock.advance(1);
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    const hours = [
      { hour: 13, calls: 2, tokens: 3, failed: 1 },
      { hour: 14, calls: 1, tokens: 3, failed: 0 },
    ];
    expect(counters.unwrittenHours('acc_a', '2026-04-15')).toEqual(hours);
    await counters.flush();
    expect(counters.unwrittenHours('acc_a', '2026-04-15')).toEqual([]);
    expect(await h.store.usageHistory.hours('acc_a', '2026-04-15')).toEqual(hours);
    expect(await h.store.usageHistory.hours('acc_b', '2026-04-15')).toEqual([
      { hour: 13, calls: 1, tokens: 3, failed: 0 },
    ]);
    // Billing's hours: the stored ones with this server's unwritten ones added in.
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    const billing = new BillingService({ ...h.deps, usageCounters: counters });
    expect(await billing.hours('acc_a', '2026-04-15')).toEqual([
      hours[0],
      { hour: 14, calls: 2, tokens: 6, failed: 0 },
    ]);
  });

  it('keeps the counts of a write that failed, adds what came meanwhile, and writes them next time', async () => {
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    // A real failure: the table is gone under the store (another connection drops it).
    const raw = new Database(h.dbPath);
    raw.exec('ALTER TABLE usage_daily RENAME TO usage_daily_away');
    await expect(counters.flush()).rejects.toThrow();
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    counters.count('acc_a', 'key_9', 'find', 'http', hit);
    expect(counters.unwritten('acc_a', '2026-04-15', '2026-04-15', 'day')[0]?.calls).toBe(3);
    expect(counters.unwrittenHours('acc_a', '2026-04-15').map((g) => g.calls)).toEqual([3]);
    raw.exec('ALTER TABLE usage_daily_away RENAME TO usage_daily');
    raw.close();
    await counters.flush();
    expect((await stored())[0]?.calls).toBe(3);
    await counters.flush();
    expect((await stored())[0]?.calls).toBe(3);
    expect((await h.store.usageHistory.hours('acc_a', '2026-04-15')).map((g) => g.calls)).toEqual([3]);
  });

  it('counts the amounts of a tool metered in pages apart from records, through a failed write too', async () => {
    const pages = { kind: 'answered', records: 3, tokens: 3, missed: false, unit: 'pages' } as const;
    counters.count('acc_a', 'key_1', 'fetch', 'http', pages);
    counters.answered('acc_a', 'key_1', 'fetch', 'mcp', {
      records: 2,
      tokens: 2,
      missed: false,
      unit: 'pages',
    });
    counters.count('acc_a', 'key_1', 'find', 'http', hit);
    counters.answered('acc_a', 'key_1', 'fetch', 'http', {
      records: 0,
      tokens: 0,
      missed: true,
      unit: 'pages',
    });
    expect(counters.unwritten('acc_a', '2026-04-15', '2026-04-15', 'tool')).toEqual([
      {
        group: 'fetch',
        calls: 3,
        tokens: 5,
        records: 0,
        units: { pages: 5 },
        withData: 2,
        withoutData: 1,
        failed: 0,
      },
      { group: 'find', calls: 1, tokens: 3, records: 2, withData: 1, withoutData: 0, failed: 0 },
    ]);
    const raw = new Database(h.dbPath);
    raw.exec('ALTER TABLE usage_daily_units RENAME TO usage_daily_units_away');
    await expect(counters.flush()).rejects.toThrow();
    counters.count('acc_a', 'key_1', 'fetch', 'http', pages);
    raw.exec('ALTER TABLE usage_daily_units_away RENAME TO usage_daily_units');
    raw.close();
    await counters.flush();
    expect(await stored('tool')).toEqual([
      expect.objectContaining({ group: 'fetch', calls: 4, records: 0, units: { pages: 8 } }),
      expect.objectContaining({ group: 'find', calls: 1, records: 2 }),
    ]);
    // Written once: the rows start again without their pages.
    await counters.flush();
    expect((await stored('tool'))[0]?.units).toEqual({ pages: 8 });
  });

  it('prunes the days older than the retention when it writes', async () => {
    await h.store.usageHistory.add([
      {
        accountId: 'acc_a',
        day: '2025-01-01',
        keyId: 'k',
        tool: 't',
        surface: 'http',
        calls: 1,
        tokens: 0,
        records: 0,
        withData: 0,
        withoutData: 1,
        failed: 0,
      },
    ]);
    // Hours are kept for the last 7 days, today included: the 8th day back goes.
    await h.store.usageHistory.add(
      [],
      ['2026-04-09', '2026-04-08'].map((day) => ({
        accountId: 'acc_a',
        day,
        hour: 1,
        calls: 1,
        tokens: 0,
        failed: 0,
      })),
    );
    const short = new UsageCounters(h.store.usageHistory, h.clock, { retentionDays: 30 });
    short.count('acc_a', 'key_1', 'find', 'http', hit);
    await short.flush();
    expect(
      (await h.store.usageHistory.history('acc_a', '2000-01-01', '2100-01-01', 'day')).map((g) => g.group),
    ).toEqual(['2026-04-15']);
    expect(await h.store.usageHistory.hours('acc_a', '2026-04-09')).toHaveLength(1);
    expect(await h.store.usageHistory.hours('acc_a', '2026-04-08')).toEqual([]);
  });
});
