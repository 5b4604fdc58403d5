import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { digestKey } from '../../src/domain/api-keys.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { WalSync } from '../../src/store/sqlite/wal-sync.js';
import { accountRecord, accountWithKey, KEY_SECRET, scratchDir, scratchServices } from '../helpers.js';

/** 2026-04-15T13:55:29Z, in epoch seconds. */
const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The database as it sits on disk: the main file and, if present, its write-ahead log. */
function rawBytes(dbPath: string): Buffer {
  const parts = [readFileSync(dbPath)];
  if (existsSync(`${dbPath}-wal`)) parts.push(readFileSync(`${dbPath}-wal`));
  return Buffer.concat(parts);
}

describe('two SQLite stores on one file (the CLI and the server)', () => {
  it('each see what the other committed', async () => {
    const { dir, cleanup } = scratchDir();
    cleanups.push(cleanup);
    const path = join(dir, 'toolgate.db');
    const server = new SqliteStore({ path });
    cleanups.push(() => server.close());
    await server.migrate(DEFAULT_PLANS, T);
    const cli = new SqliteStore({ path });
    cleanups.push(() => cli.close());
    expect(await cli.migrate(DEFAULT_PLANS, T)).toEqual({ applied: [] });

    const accountId = newId('acc');
    await cli.accounts.create(accountRecord(T, { id: accountId }));
    await cli.keys.create(
      {
        id: newId('key'),
        accountId,
        name: null,
        hint: 'tg_…abcd',
        createdAt: T,
        revokedAt: null,
        lastUsedAt: null,
      },
      'digest-1',
    );
    expect((await server.accounts.get(accountId))?.name).toBe('Acme');
    const found = await server.keys.findActive('digest-1');
    expect(found?.accountId).toBe(accountId);

    const grant = await server.ledger.append({
      id: newId('led'),
      accountId,
      kind: 'grant',
      amount: 40,
      reason: null,
      idempotencyKey: null,
      requestHash: 'h',
      createdAt: T,
    });
    expect(grant.kind).toBe('applied');
    expect((await cli.accounts.get(accountId))?.tokenBalance).toBe(40);

    // Revocation on one connection takes effect on the other at its next lookup: the next request,
    // which arrives in a later turn of the event loop than the revocation it follows.
    await cli.keys.revoke(found!.keyId, T + 1);
    await nextTurn();
    expect(await server.keys.findActive('digest-1')).toBeUndefined();
  });
});

/** What separates two requests: a turn of the event loop (the second arrives by I/O after the first). */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the SQLite file', () => {
  it('holds the digest of an API key but never the key itself', async () => {
    const h = await scratchServices();
    cleanups.push(() => h.close());
    const { key } = await accountWithKey(h.services);
    const digest = digestKey(KEY_SECRET, key);
    const body = key.slice(key.indexOf('_') + 1);

    // While the store is open the row may still sit in the write-ahead log.
    let bytes = rawBytes(h.dbPath);
    expect(bytes.includes(digest)).toBe(true);
    expect(bytes.includes(key)).toBe(false);
    expect(bytes.includes(body)).toBe(false);

    await h.store.close();
    bytes = rawBytes(h.dbPath);
    expect(bytes.includes(digest)).toBe(true);
    expect(bytes.includes(key)).toBe(false);
    expect(bytes.includes(body)).toBe(false);
  });
});

describe('durable answers', () => {
  it('every write, and every group of consumptions, is answered after an fdatasync of the WAL', async () => {
    const h = await scratchServices();
    cleanups.push(() => h.close());
    const store = h.store as SqliteStore;
    // Each awaited write is followed by at least one fdatasync before it is answered.
    let before = store.walSyncs;
    const { accountId, keyId } = await accountWithKey(h.services);
    expect(store.walSyncs).toBeGreaterThanOrEqual(before + 2);
    before = store.walSyncs;
    await h.services.keys.revoke(keyId);
    expect(store.walSyncs).toBe(before + 1);
    // Concurrent consumptions are committed together and share fdatasyncs.
    before = store.walSyncs;
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        h.services.usage.record(accountId, { category: 'search', records: 1 }),
      ),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(store.walSyncs).toBeGreaterThan(before);
    expect(store.walSyncs).toBeLessThanOrEqual(before + 2);
  });

  it('consumptions that arrive while an fdatasync runs are committed when it ends and answered after the next', async () => {
    const h = await scratchServices();
    cleanups.push(() => h.close());
    const store = h.store as SqliteStore;
    const { accountId } = await accountWithKey(h.services);
    // The account's snapshot cached, so each consumption below reaches the store in the same turn.
    await h.services.usage.record(accountId, { category: 'search', records: 1 });
    const before = store.walSyncs;
    // The first consumption is committed at the end of this turn and starts an fdatasync; the
    // others arrive in the next turn, while it runs (its end is seen no sooner than the next
    // poll of the event loop), and are held for it.
    const first = h.services.usage.record(accountId, { category: 'search', records: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    const wal = (store as unknown as { walSync: WalSync }).walSync;
    expect(wal.busy).toBe(true);
    const holds = vi.spyOn(wal, 'beforeNext');
    const held = Array.from({ length: 5 }, () =>
      h.services.usage.record(accountId, { category: 'search', records: 2 }),
    );
    expect(holds).toHaveBeenCalledTimes(1);
    const results = await Promise.all([first, ...held]);
    expect(results.every((r) => r.ok)).toBe(true);
    // One fdatasync for the first, one for the five held together.
    expect(store.walSyncs).toBe(before + 2);
    const last = results[5];
    expect(last?.ok && last.value.response.fair_use.search?.records['5h'].used).toBe(12);
    const snapshot = await store.accounts.snapshot(accountId);
    expect(
      snapshot?.windows.find((w) => w.category === 'search' && w.unit === 'records' && w.window === '5h')
        ?.used,
    ).toBe(12);
  });
  it('consumptions that keep coming turn after turn wait for each other, three turns at most', async () => {
    const h = await scratchServices();
    cleanups.push(() => h.close());
    const store = h.store as SqliteStore;
    const wal = (store as unknown as { walSync: WalSync }).walSync;
    const { accountId } = await accountWithKey(h.services);
    await h.services.usage.record(accountId, { category: 'search', records: 1 });
    const before = store.walSyncs;
    const record = () => h.services.usage.record(accountId, { category: 'search', records: 1 });
    // Two in one turn: more may be on their way, so the end of the turn commits nothing.
    const calls = [record(), record()];
    await nextTurn();
    expect(wal.busy).toBe(false);
    calls.push(record());
    await nextTurn();
    expect(wal.busy).toBe(false);
    // They keep coming, but the third turn's end commits what waited: the fdatasync has started.
    calls.push(record());
    await nextTurn();
    expect(wal.busy).toBe(true);
    const results = await Promise.all(calls);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(store.walSyncs).toBe(before + 1);
    const used = results.map((r) => r.ok && r.value.response.fair_use.search?.records['5h'].used);
    expect(used).toEqual([2, 3, 4, 5]);
  });

  it('held consumptions join the next fdatasync even when another write already waits for it', async () => {
    const h = await scratchServices();
    cleanups.push(() => h.close());
    const store = h.store as SqliteStore;
    const { accountId, keyId } = await accountWithKey(h.services);
    await h.services.usage.record(accountId, { category: 'search', records: 1 });
    const before = store.walSyncs;
    const first = h.services.usage.record(accountId, { category: 'search', records: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    expect((store as unknown as { walSync: WalSync }).walSync.busy).toBe(true);
    // A write committed while the fdatasync runs waits for the next one; so do the held consumptions.
    const revoked = h.services.keys.revoke(keyId);
    const held = Array.from({ length: 3 }, () =>
      h.services.usage.record(accountId, { category: 'search', records: 1 }),
    );
    const results = await Promise.all([first, revoked, ...held]);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(store.walSyncs).toBe(before + 2);
  });
});
