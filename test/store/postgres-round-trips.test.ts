/**
 * What a consumption costs PostgreSQL, counted on the real server: two round trips (with or
 * without a charge or an idempotency key), the second carrying the COMMIT and, after it and outside
 * the transaction, the NOTIFY; consumptions that arrive together share their two round trips, their
 * COMMIT and one NOTIFY, and the same named statements whatever their number. An account changed
 * meanwhile by another process is consumed from exactly.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { incrementsFor } from '../../src/domain/fair-use.js';
import { newId } from '../../src/domain/ids.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore as Store } from '../../src/store/postgres/postgres-store.js';
import type { UsageCommit } from '../../src/store/store.js';
import { accountRecord } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore } from '../postgres.js';

const T = Date.UTC(2026, 3, 15, 13, 55, 29) / 1000;

interface Counted {
  /**
   * Every query text sent, in order, on any connection of the pool, by round trip: those sent
   * together (pipelined, before any answer came back) make one.
   */
  sent: string[][];
}

type Query = (...args: unknown[]) => unknown;

/** Puts `wrap` around `query` of every connection the store's pool gives out, once per connection. */
function aroundQueries(store: Store, wrap: (query: Query) => Query): void {
  const pool = (store as unknown as { pool: { on(e: string, f: (c: never) => void): void } }).pool;
  const wrapped = new WeakSet<object>();
  pool.on('acquire', (client: { query: Query }) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    client.query = wrap(client.query.bind(client));
  });
}

/** Counts what the store's pool sends: queries sent with no answer back in between are one round trip. */
function count(store: Store): Counted {
  const counted: Counted = { sent: [] };
  let answered = true;
  aroundQueries(store, (query) => (...args) => {
    const q = args[0] as string | { text: string };
    if (answered || counted.sent.length === 0) counted.sent.push([]);
    answered = false;
    counted.sent.at(-1)!.push(typeof q === 'string' ? q : q.text);
    const heard = () => {
      answered = true;
    };
    const last = args.at(-1);
    // pool.query passes a callback (and gets no promise back).
    if (typeof last === 'function')
      return query(...args.slice(0, -1), (...answer: unknown[]) => {
        heard();
        return (last as (...a: unknown[]) => unknown)(...answer);
      });
    const result = query(...args) as Promise<unknown>;
    void result.then(heard, heard);
    return result;
  });
  return counted;
}

describe.skipIf(!(await postgresAvailable()))('PostgreSQL consumption round trips', () => {
  let store: Store;
  let schema: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    const fixture = scratchPostgresStore();
    cleanup = fixture.cleanup;
    schema = fixture.schema;
    // With a cache observing, as a server has it: the change feed and its notifications are in play.
    store = withReadCache(() => fixture.store).store as unknown as Store;
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

  const account = async (id: string) => {
    await store.accounts.create(accountRecord(T, { id, planId: DEFAULT_PLANS[0]!.id }));
    await grant(store, id, 100);
  };
  const grant = (on: Store, accountId: string, amount: number) =>
    on.ledger.append({
      id: newId('led'),
      accountId,
      kind: 'grant',
      amount,
      reason: null,
      idempotencyKey: null,
      requestHash: '',
      createdAt: T,
    });

  it('two round trips per consumption, the NOTIFY after the COMMIT in the second, shared by those that arrive together', async () => {
    const ids = Array.from({ length: 20 }, () => newId('acc'));
    for (const id of ids) await account(id);
    const counted = count(store);
    // Warm: every connection of the pool acquired (and so counted) once.
    await Promise.all(ids.map((id) => store.usage.commit(commit(id))));
    counted.sent.length = 0;

    expect((await store.usage.commit(commit(ids[0]!))).kind).toBe('committed');
    expect(counted.sent).toHaveLength(2);
    const [first, second] = counted.sent as [string[], string[]];
    expect(first[0]).toMatch(/^BEGIN;/);
    expect(first.join('\n')).not.toMatch(/COMMIT|pg_notify/);
    // One statement writes everything; the COMMIT goes behind it, in the same round trip.
    expect(second).toHaveLength(2);
    // The notification is a transaction of its own, after the COMMIT, that waits for no WAL flush.
    expect(second[1]).toMatch(
      /^COMMIT;\s*SELECT set_config\('synchronous_commit', 'off', true\);\s*SELECT pg_notify\([^;]*\)$/,
    );
    expect(second.join('\n').match(/COMMIT/g)).toHaveLength(1);

    counted.sent.length = 0;
    const charged = await store.usage.commit(
      commit(ids[1]!, {
        charge: { entryId: newId('led'), amount: 3, reason: null },
        idempotency: { key: 'k1', requestHash: 'h' },
      }),
    );
    expect(charged.kind).toBe('committed');
    expect(counted.sent).toHaveLength(2);

    counted.sent.length = 0;
    const all = await Promise.all(ids.map((id) => store.usage.commit(commit(id))));
    expect(all.every((o) => o.kind === 'committed')).toBe(true);
    const batches = counted.sent.filter((trip) => trip[0]!.startsWith('BEGIN')).length;
    // Two round trips per group commit, one NOTIFY each, and fewer group commits than consumptions.
    expect(counted.sent).toHaveLength(2 * batches);
    expect(counted.sent.flat().filter((q) => q.includes('pg_notify'))).toHaveLength(batches);
    // The same three statements before the COMMIT however many consumptions a group commit holds.
    expect(new Set(counted.sent.flat().filter((q) => !q.includes('pg_notify'))).size).toBe(3);
    expect(batches).toBeLessThan(ids.length);
  });

  it('consumes exactly from an account another process changed meanwhile', async () => {
    const id = newId('acc');
    await account(id);
    const elsewhere = new Store({ url: POSTGRES_URL, schema });
    try {
      const charge = () => ({ charge: { entryId: newId('led'), amount: 10, reason: null } });
      expect(await store.usage.commit(commit(id, charge()))).toMatchObject({ kind: 'committed' });
      // Another server consumes, and an admin grants, through another pool: this one cannot know.
      expect(await elsewhere.usage.commit(commit(id, charge()))).toMatchObject({ kind: 'committed' });
      await grant(elsewhere, id, 5);
      const counted = count(store);
      const third = await store.usage.commit(commit(id, { ...charge(), render: (w, b) => ({ w, b }) }));
      expect(third.kind).toBe('committed');
      const sent = [...counted.sent];
      // 100 - 10 - 10 + 5 - 10, and three records in the 5-hour window.
      expect(third.kind === 'committed' && (third.response as { b: number }).b).toBe(75);
      const used = (await store.accounts.snapshot(id))?.windows.find(
        (w) => w.unit === 'records' && w.window === '5h',
      );
      expect(used?.used).toBe(3);
      expect((await store.accounts.snapshot(id))?.account.tokenBalance).toBe(75);
      expect(sent).toHaveLength(2);

      // Without a charge the balance stays: the windows alone show the other process's consumption.
      const free = newId('acc');
      await account(free);
      expect((await store.usage.commit(commit(free))).kind).toBe('committed');
      expect((await elsewhere.usage.commit(commit(free))).kind).toBe('committed');
      const after = await store.usage.commit(commit(free, { render: (w) => w }));
      const windows =
        after.kind === 'committed'
          ? (after.response as { unit: string; window: string; used: number }[])
          : [];
      expect(windows.find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(3);
    } finally {
      await elsewhere.close();
    }
  });

  it('a notification that fails after the COMMIT leaves the consumptions committed, answered and logged', async () => {
    const warnings: string[] = [];
    const own = new Store({ url: POSTGRES_URL, schema, warn: (m) => warnings.push(m) });
    try {
      const cached = withReadCache(() => own).store as unknown as Store;
      const id = newId('acc');
      await account(id);
      // Fault injection on the real server: the payload made longer than PostgreSQL accepts, so its
      // pg_notify fails, after the COMMIT, in the same query.
      aroundQueries(
        own,
        (query) =>
          (...args) =>
            typeof args[0] === 'string' && args[0].includes('pg_notify(')
              ? query(args[0].replace(/, '(c [^']*)'\)$/, (_, p: string) => `, '${p}${'x'.repeat(9000)}')`))
              : query(...args),
      );
      const outcome = await cached.usage.commit(commit(id, { render: (w) => w }));
      expect(outcome.kind).toBe('committed');
      expect(warnings).toEqual(['could not notify the other servers of committed consumptions']);
      // Committed: another pool reads the window; and the same connection serves the next one.
      const used = (await store.accounts.snapshot(id))?.windows.find(
        (w) => w.unit === 'records' && w.window === '5h',
      );
      expect(used?.used).toBe(1);
      expect((await cached.usage.commit(commit(id))).kind).toBe('committed');
      expect(
        (await store.accounts.snapshot(id))?.windows.find((w) => w.window === '5h' && w.unit === 'records')
          ?.used,
      ).toBe(2);
    } finally {
      await own.close();
    }
  });
});
