/**
 * What a consumption costs PostgreSQL, counted on the real server: two round trips (with or
 * without a charge or an idempotency key), no NOTIFY inside its transaction; consumptions that
 * arrive together share their two round trips, their COMMIT and one NOTIFY.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { incrementsFor } from '../../src/domain/fair-use.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import type { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { UsageCommit } from '../../src/store/store.js';
import { postgresAvailable, scratchPostgresStore } from '../postgres.js';

const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;

interface Counted {
  /** Every query text sent, in order, on any connection of the pool. */
  sent: string[];
}

/** Counts what the store's pool sends: each client.query is one round trip. */
function count(store: PostgresStore): Counted {
  const counted: Counted = { sent: [] };
  const pool = (store as unknown as { pool: { on(e: string, f: (c: never) => void): void } }).pool;
  pool.on('acquire', (client: { query: (...a: unknown[]) => unknown; __counted?: boolean }) => {
    if (client.__counted) return;
    client.__counted = true;
    const query = client.query.bind(client);
    client.query = (...args: unknown[]) => {
      const q = args[0] as string | { text: string };
      counted.sent.push(typeof q === 'string' ? q : q.text);
      return query(...args);
    };
  });
  return counted;
}

describe.skipIf(!(await postgresAvailable()))('PostgreSQL consumption round trips', () => {
  let store: PostgresStore;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    const fixture = scratchPostgresStore();
    cleanup = fixture.cleanup;
    // With a cache observing, as a server has it: the change feed and its notifications are in play.
    store = withReadCache(() => fixture.store).store as unknown as PostgresStore;
    await store.migrate(DEFAULT_PLANS, T);
  });
  afterEach(() => cleanup());

  const commit = (accountId: string, over: Partial<UsageCommit> = {}): UsageCommit => ({
    accountId,
    increments: incrementsFor(DEFAULT_PLANS[0]!.limits, 'enrich', { records: 1, requests: 1 }),
    now: T,
    render: () => ({ ok: true }),
    ...over,
  });

  it('two round trips per consumption, shared by those that arrive together, with one NOTIFY', async () => {
    const ids = Array.from({ length: 20 }, () => newId('acc'));
    for (const id of ids) {
      await store.createAccount({
        id,
        name: 'a',
        planId: DEFAULT_PLANS[0]!.id,
        status: 'active',
        unlimitedOverride: null,
        tokenBalance: 0,
        createdAt: T,
        updatedAt: T,
        planSince: T,
        lowBalance: null,
      });
      await store.appendLedger({
        id: newId('led'),
        accountId: id,
        kind: 'grant',
        amount: 100,
        reason: null,
        idempotencyKey: null,
        requestHash: '',
        createdAt: T,
      });
    }
    const counted = count(store);
    // Warm: every connection of the pool acquired (and so counted) once.
    await Promise.all(ids.map((id) => store.commitUsage(commit(id))));
    counted.sent.length = 0;

    const one = await store.commitUsage(commit(ids[0]!));
    expect(one.kind).toBe('committed');
    const consumption = counted.sent.filter((q) => !q.startsWith('SELECT pg_notify'));
    expect(consumption).toHaveLength(2);
    expect(consumption[0]).toMatch(/^BEGIN;/);
    expect(consumption[1]).toMatch(/COMMIT$/);
    expect(counted.sent.join('\n')).not.toMatch(/BEGIN[\s\S]*pg_notify[\s\S]*COMMIT/);

    counted.sent.length = 0;
    const charged = await store.commitUsage(
      commit(ids[1]!, {
        charge: { entryId: newId('led'), amount: 3, reason: null },
        idempotency: { key: 'k1', requestHash: 'h' },
      }),
    );
    expect(charged.kind).toBe('committed');
    expect(counted.sent.filter((q) => !q.startsWith('SELECT pg_notify'))).toHaveLength(2);

    counted.sent.length = 0;
    const all = await Promise.all(ids.map((id) => store.commitUsage(commit(id))));
    expect(all.every((o) => o.kind === 'committed')).toBe(true);
    const notifies = counted.sent.filter((q) => q.startsWith('SELECT pg_notify')).length;
    const batches = counted.sent.filter((q) => q.startsWith('BEGIN')).length;
    // Two round trips per group commit, and fewer group commits than consumptions.
    expect(counted.sent.length - notifies).toBe(2 * batches);
    expect(batches).toBeLessThan(ids.length);
    expect(notifies).toBeGreaterThanOrEqual(1);
    expect(notifies).toBeLessThanOrEqual(batches);
  });
});
