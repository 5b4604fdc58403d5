/**
 * SQLite's writer thread (src/store/sqlite/writer.ts), which writes the batches that charge:
 * consumptions decided on the event loop and written beside it stay exact when other processes write the same file, when this process's own
 * ledger writes move a balance meanwhile, and the read cache is kept across the thread's own
 * commits while another process's commits still empty it.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { incrementsFor } from '../../src/domain/fair-use.js';
import { newId } from '../../src/domain/ids.js';
import { createServices } from '../../src/service/index.js';
import type { Change } from '../../src/store/changes.js';
import { ReadCache } from '../../src/store/read-cache.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { UsageCommit } from '../../src/store/store.js';
import { accountOnPlan, type Harness, KEY_SECRET, scratchServices, T0 } from '../helpers.js';

const NOW = Math.floor(T0 / 1000);

/** A consumption of one request that charges one token, as a charged tool's call commits it. */
async function charged(h: Harness, accountId: string): Promise<UsageCommit> {
  const snapshot = (await h.store.accounts.snapshot(accountId))!;
  return {
    accountId,
    increments: incrementsFor(snapshot.plan.limits, 'enrich', { requests: 1 }),
    now: NOW,
    charge: { entryId: newId('led', Date.now()), amount: 1, reason: 'test' },
    render: (_w, balance) => ({ balance }),
  };
}

describe('SQLite consumptions through the writer thread', () => {
  let h: Harness;
  let accountId: string;
  beforeEach(async () => {
    h = await scratchServices({ writerThread: true });
    accountId = await accountOnPlan(h.services, { records5h: 100_000, records1w: 100_000, requests5h: 100 });
    const granted = await h.services.tokens.apply(
      accountId,
      { kind: 'grant', amount: 10_000 },
      { actor: 'test' },
    );
    expect(granted.ok).toBe(true);
  });
  afterEach(async () => h.close());

  /** A charged consumption through this store (the thread), or a metered one through another's. */
  const consume = async (services?: Harness['services']) =>
    services
      ? services.usage.record(accountId, { category: 'enrich', requests: 1 })
      : { ok: (await h.store.usage.commit(await charged(h, accountId))).kind === 'committed' };
  const used = async () =>
    (await h.store.accounts.snapshot(accountId))?.windows.find((w) => w.unit === 'requests')?.used;

  it('writes them in its thread and grants 300 at once exactly the limit', async () => {
    const commits = await Promise.all(Array.from({ length: 300 }, () => charged(h, accountId)));
    const outcomes = await Promise.all(commits.map((c) => h.store.usage.commit(c)));
    expect(outcomes.filter((o) => o.kind === 'committed')).toHaveLength(100);
    expect(outcomes.filter((o) => o.kind === 'exceeded')).toHaveLength(200);
    expect(await used()).toBe(100);
    expect(h.store.writer?.committed).toBeGreaterThan(0);
  });

  it('grants exactly the limit when another process consumes from the same file at once', async () => {
    const other = new SqliteStore({ path: h.dbPath });
    const otherServices = createServices({
      store: other,
      clock: h.clock,
      keyPrefix: 'tg',
      keySecret: KEY_SECRET,
    });
    try {
      const results = await Promise.all(
        Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? consume() : consume(otherServices))),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(100);
      expect(await used()).toBe(100);
    } finally {
      await other.close();
    }
  });

  it('decides a batch again when another process commits while it waits for the write lock', async () => {
    // Warm: the thread is running and the account's windows are known.
    expect((await consume()).ok).toBe(true);
    const lock = new Database(h.dbPath);
    lock.pragma('busy_timeout = 5000');
    lock.exec('BEGIN IMMEDIATE');
    // Decided now, on 1 used: the thread waits for the lock to write them.
    const waiting = Array.from({ length: 10 }, () => consume());
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Another process takes 80 of the 100 meanwhile.
    const row = lock
      .prepare("SELECT windows FROM fair_use_state WHERE account_id = ? AND category = 'enrich'")
      .pluck()
      .get(accountId) as string;
    const windows = (JSON.parse(row) as [string, string, number, number, number][]).map((w) =>
      w[0] === 'requests' ? [w[0], w[1], w[2], w[3], 81] : w,
    );
    lock
      .prepare("UPDATE fair_use_state SET windows = ? WHERE account_id = ? AND category = 'enrich'")
      .run(JSON.stringify(windows), accountId);
    lock.exec('COMMIT');
    lock.close();
    const results = await Promise.all(waiting);
    // Decided again on 81 used: 10 more fit, and nothing the other process took is written over.
    expect(results.every((r) => r.ok)).toBe(true);
    expect(await used()).toBe(91);
    expect(h.store.writer?.conflicts).toBeGreaterThan(0);
    const more = await Promise.all(Array.from({ length: 20 }, () => consume()));
    expect(more.filter((r) => r.ok)).toHaveLength(9);
    expect(await used()).toBe(100);
  });
});

describe('a charged consumption through the writer thread, beside ledger writes on the event loop', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await scratchServices({ writerThread: true });
  });
  afterEach(async () => h.close());

  it('never takes the balance below zero and keeps it equal to the ledger’s sum', async () => {
    const accountId = await accountOnPlan(h.services, { records5h: 1e9, records1w: 1e9, requests5h: 1e9 });
    const granted = await h.services.tokens.apply(
      accountId,
      { kind: 'grant', amount: 500 },
      { actor: 'test' },
    );
    expect(granted.ok).toBe(true);
    const snapshot = (await h.store.accounts.snapshot(accountId))!;
    const charge = (): UsageCommit => ({
      accountId,
      increments: incrementsFor(snapshot.plan.limits, 'enrich', { records: 1, requests: 1 }),
      now: NOW,
      charge: { entryId: newId('led', Date.now()), amount: 3, reason: 'test' },
      render: (_w, balance) => ({ balance }),
    });
    // Consumptions charging 3 each, while the event loop's own ledger takes 7 at a time.
    const work: Promise<{ kind: string }>[] = [];
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 10; i++) work.push(h.store.usage.commit(charge()));
      await new Promise((resolve) => setImmediate(resolve));
      work.push(
        h.services.tokens
          .apply(accountId, { kind: 'charge', amount: 7 }, { actor: 'test' })
          .then((r) => ({ kind: r.ok ? 'committed' : 'insufficient' })),
      );
    }
    const outcomes = await Promise.all(work);
    const ledger = await h.store.ledger.list(accountId, { limit: 10_000 });
    const sum = ledger.reduce((n, e) => n + e.delta, 0);
    const balance = (await h.store.accounts.snapshot(accountId))!.account.tokenBalance;
    expect(balance).toBeGreaterThanOrEqual(0);
    expect(balance).toBe(sum);
    // Each charge that was answered committed has its entry, and nothing else does.
    const committed = outcomes.filter((o) => o.kind === 'committed').length;
    expect(ledger).toHaveLength(committed + 1);
  });
});

describe('the read cache beside the writer thread', () => {
  it('keeps what it holds across the thread’s commits, and forgets it at another process’s', async () => {
    const seen: Change[] = [];
    class Watching extends ReadCache {
      override changed(c: Change): void {
        seen.push(c);
        super.changed(c);
      }
    }
    const h = await scratchServicesWith(new Watching());
    try {
      const accountId = await accountOnPlan(h.services, { records5h: 1e9, records1w: 1e9, requests5h: 1e9 });
      await h.services.tokens.apply(accountId, { kind: 'grant', amount: 10_000 }, { actor: 'test' });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      await turn();
      h.store.inSync();
      // Reported so far by the migrations and the first check.
      const all = () => seen.filter((c) => c === 'all').length - before;
      const before = seen.filter((c) => c === 'all').length;
      for (let i = 0; i < 5; i++)
        await Promise.all(
          Array.from({ length: 20 }, () => charged(h, accountId).then((c) => h.store.usage.commit(c))),
        );
      expect(h.store.writer?.committed).toBeGreaterThan(0);
      await turn();
      h.store.inSync();
      expect(all()).toBe(0);
      // Another process commits: the next check empties the cache.
      const other = new Database(h.dbPath);
      other.prepare('UPDATE accounts SET name = ? WHERE id = ?').run('renamed elsewhere', accountId);
      other.close();
      await turn();
      h.store.inSync();
      expect(all()).toBe(1);
      // And the thread's next commits are its own again.
      await Promise.all(
        Array.from({ length: 20 }, () => charged(h, accountId).then((c) => h.store.usage.commit(c))),
      );
      await turn();
      h.store.inSync();
      expect(all()).toBe(1);
    } finally {
      await h.close();
    }
  });
});

async function scratchServicesWith(cache: ReadCache): Promise<Harness> {
  return scratchServices({ writerThread: true, cache });
}
