/**
 * The read cache in both stores: used (a second read is answered from memory), and never stale
 * across connections: what another connection (another server, the CLI) changes is seen next.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { incrementsFor } from '../../src/domain/fair-use.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { createServices } from '../../src/service/index.js';
import { type CachedReads, withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { accountWithKey, KEY_SECRET, scratchDir, T0 } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a read answered at once, from memory; undefined when it had to go to the database. */
function peek<T>(answer: T | Promise<T>): T | undefined {
  if (!(answer instanceof Promise)) return answer;
  answer.catch(() => {});
  return undefined;
}

/** A store with the read cache in front, as a server has it. */
type Side = { store: Store; reads: CachedReads };

/** Polls `read` until `ok`, for at most `ms` (0: exactly once). */
async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let v = await read();
  while (!ok(v) && Date.now() < end) {
    await sleep(10);
    v = await read();
  }
  return v;
}

/** Waits (at most 3 s) until `reads` answers the account's snapshot from memory. */
const cachedIn = (reads: CachedReads, accountId: string) =>
  until(
    () => reads.getSnapshot(accountId),
    () => peek(reads.getSnapshot(accountId)) !== undefined,
    3_000,
  );

function cacheSuite(
  name: string,
  open: () => Promise<{ a: Side; b: Side; cleanup: () => Promise<void> }>,
  notifyMs: number,
  updatesInPlace: boolean,
) {
  describe(`${name} read cache`, () => {
    const setup = async () => {
      const opened = await open();
      const a = opened.a.reads;
      const b = opened.b.store;
      await opened.a.store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
      const clock = new FixedClock(T0);
      const services = ({ store, reads }: Side) =>
        createServices({ store, reads, clock, keyPrefix: 'tg', keySecret: KEY_SECRET });
      return {
        a,
        b,
        storeA: opened.a.store,
        cleanup: opened.cleanup,
        sa: services(opened.a),
        sb: services(opened.b),
      };
    };

    it('answers a second read from memory', async () => {
      const { a, cleanup, sa } = await setup();
      try {
        const { accountId } = await accountWithKey(sa);
        const first = await until(
          () => a.getSnapshot(accountId),
          () => true,
          0,
        );
        // The PostgreSQL cache turns on once its change feed listens.
        const second = await until(
          async () => [await a.getSnapshot(accountId), await a.getSnapshot(accountId)] as const,
          ([x, y]) => x === y,
          3_000,
        );
        expect(first?.account.id).toBe(accountId);
        expect(second[0]).toBe(second[1]);
      } finally {
        await cleanup();
      }
    });

    it('sees a key revoked, an account suspended and a consumption made through another connection', async () => {
      const { a, cleanup, sa, sb } = await setup();
      try {
        const { accountId, keyId, key } = await accountWithKey(sa);
        await sleep(notifyMs);
        // Connection A reads (and caches) the key and the account.
        for (let i = 0; i < 3; i++) {
          expect((await sa.keys.authenticate(key)).ok).toBe(true);
          expect((await a.getSnapshot(accountId))?.account.status).toBe('active');
        }
        await sb.keys.revoke(keyId);
        await sb.accounts.update(accountId, { status: 'suspended' });
        await sb.usage.record(accountId, { category: 'search', records: 2 }).then(() => undefined);
        // The next request arrives by I/O, in a later turn of the event loop than these writes.
        await new Promise((resolve) => setImmediate(resolve));
        const auth = await until(
          () => sa.keys.authenticate(key),
          (r) => !r.ok,
          notifyMs,
        );
        expect(auth.ok).toBe(false);
        const snap = await until(
          () => a.getSnapshot(accountId),
          (s) => s?.account.status === 'suspended',
          notifyMs,
        );
        expect(snap?.account.status).toBe('suspended');
        expect(snap?.apiKeyCount).toBe(0);
      } finally {
        await cleanup();
      }
    });

    it('after its own consumptions and charges, answers what the database holds', async () => {
      const { a, b, cleanup, sa } = await setup();
      try {
        const { accountId } = await accountWithKey(sa, { tokens: 100 });
        await cachedIn(a, accountId);
        const before = peek(a.getSnapshot(accountId))!;
        for (let i = 1; i <= 3; i++) {
          const snapshot = (await a.getSnapshot(accountId))!;
          const metered = await sa.usage.meter({
            snapshot,
            category: 'enrich',
            amounts: { records: i, requests: 1 },
            tokenCost: i,
            reason: 'test',
            render: () => null,
          });
          expect(metered).toMatchObject({ ok: true });
          // SQLite brings the cached snapshot up to date in place; PostgreSQL drops it.
          const cached = peek(a.getSnapshot(accountId));
          expect(cached !== undefined).toBe(updatesInPlace);
          // The other connection's view, once this change has reached it (PostgreSQL: by NOTIFY).
          const spent = (i * (i + 1)) / 2;
          const truth = await until(
            () => b.accounts.snapshot(accountId),
            (t) => t?.account.tokenBalance === before.account.tokenBalance - spent,
            notifyMs,
          );
          if (cached) expect(cached).toEqual(truth);
          expect(await a.getSnapshot(accountId)).toEqual(truth);
        }
        const after = await a.getSnapshot(accountId);
        expect(after?.account.tokenBalance).toBe(before.account.tokenBalance - 6);
        expect(after?.windows.find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(6);
        expect(JSON.parse(peek(sa.accountViewJson(accountId)) ?? 'null')?.results?.token_balance).toBe(
          before.account.tokenBalance - 6,
        );
      } finally {
        await cleanup();
      }
    });

    it('after its own consumptions without a charge, in a new category too, answers what the database holds', async () => {
      const { a, b, cleanup, sa } = await setup();
      try {
        const { accountId } = await accountWithKey(sa);
        await cachedIn(a, accountId);
        for (const [category, records] of [
          ['search', 1],
          ['enrich', 2],
          ['search', 3],
        ] as const) {
          expect((await sa.usage.record(accountId, { category, records })).ok).toBe(true);
          const truth = await until(
            () => b.accounts.snapshot(accountId),
            (t) => t?.windows.some((w) => w.category === category && w.used >= records) ?? false,
            notifyMs,
          );
          const cached = peek(a.getSnapshot(accountId));
          expect(cached !== undefined).toBe(updatesInPlace);
          // The same windows, in the same order, as a read of the database gives.
          if (cached) expect(cached).toEqual(truth);
          expect(await a.getSnapshot(accountId)).toEqual(truth);
        }
      } finally {
        await cleanup();
      }
    });

    it("answers get_account with each consumption's windows, though its answer was made before them", async () => {
      const { a, cleanup, sa } = await setup();
      try {
        const { accountId } = await accountWithKey(sa);
        await cachedIn(a, accountId);
        const remaining = async () => {
          const view = JSON.parse((await sa.accountViewJson(accountId)) ?? 'null');
          return view?.metadata?.fair_use?.records_remaining_5h as number;
        };
        const limit = await remaining();
        // The first starts the windows; the next ones add to the same windows (kept in place).
        let used = 0;
        let requests = 0;
        for (const records of [2, 3, 4]) {
          const before = peek(a.getSnapshot(accountId));
          expect((await sa.usage.record(accountId, { category: 'enrich', records })).ok).toBe(true);
          used += records;
          requests++;
          expect(await remaining()).toBe(limit - used);
          const now = await a.getSnapshot(accountId);
          if (updatesInPlace) expect(now).not.toBe(before);
          expect(now?.windows.find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(used);
          expect(now?.windows.find((w) => w.unit === 'requests')?.used).toBe(requests);
        }
      } finally {
        await cleanup();
      }
    });

    it('decides a consumption on what another connection consumed, though the account is cached', async () => {
      const { a, b, storeA, cleanup, sa } = await setup();
      try {
        // The free plan: enrich records 100 per 5 hours.
        const { accountId } = await accountWithKey(sa);
        const commit = (store: Store, records: number) =>
          store.usage.commit({
            accountId,
            increments: incrementsFor(DEFAULT_PLANS[0]!.limits, 'enrich', { records, requests: 1 }),
            now: Math.floor(T0 / 1000),
            render: (windows) => windows,
          });
        expect((await commit(storeA, 1)).kind).toBe('committed');
        await until(
          () => a.getSnapshot(accountId),
          () => peek(a.getSnapshot(accountId)) !== undefined || !updatesInPlace,
          3_000,
        );
        expect((await commit(b, 98)).kind).toBe('committed');
        // 1 + 98 + 2 would pass 100: refused, with the window as the other connection left it.
        const over = await commit(storeA, 2);
        expect(over).toMatchObject({ kind: 'exceeded', exceeded: { used: 99, limit: 100 } });
        expect((await commit(storeA, 1)).kind).toBe('committed');
        const truth = await b.accounts.snapshot(accountId);
        expect(truth?.windows.find((w) => w.unit === 'records' && w.window === '5h')?.used).toBe(100);
      } finally {
        await cleanup();
      }
    });

    it('answers at once (no promise) only what a read would: nothing cold, nothing stale', async () => {
      const { a, cleanup, sa, sb } = await setup();
      try {
        const { accountId, keyId, key } = await accountWithKey(sa);
        expect(peek(sa.keys.authenticate('tg_short'))).toMatchObject({ ok: false });
        expect(peek(sa.keys.authenticate(undefined))).toMatchObject({ ok: false });
        // Cold: only the database can tell.
        expect(peek(sa.keys.authenticate(key))).toBeUndefined();
        expect(peek(a.getSnapshot(accountId))).toBeUndefined();
        expect(peek(sa.accountViewJson(accountId))).toBeUndefined();
        // Warm (on PostgreSQL once the change feed listens): the same answers as the reads.
        await until(
          async () => [await sa.keys.authenticate(key), await a.getSnapshot(accountId)] as const,
          () => peek(sa.keys.authenticate(key)) !== undefined && peek(a.getSnapshot(accountId)) !== undefined,
          3_000,
        );
        expect(peek(sa.keys.authenticate(key))).toEqual({ ok: true, value: { keyId, accountId } });
        expect(peek(a.getSnapshot(accountId))).toBe(await a.getSnapshot(accountId));
        expect(JSON.parse(peek(sa.accountViewJson(accountId)) ?? 'null')).toEqual(
          JSON.parse((await sa.accountViewJson(accountId)) ?? ''),
        );
        await sb.keys.revoke(keyId);
        await sb.accounts.update(accountId, { status: 'suspended' });
        await new Promise((resolve) => setImmediate(resolve));
        // After the change has had its moment to arrive: never the old answer again.
        await sleep(notifyMs);
        expect(peek(sa.keys.authenticate(key))).toBeUndefined();
        expect((await sa.keys.authenticate(key)).ok).toBe(false);
        expect(peek(sa.keys.authenticate(key))).toBeUndefined();
        const snap = peek(a.getSnapshot(accountId));
        expect(snap === undefined || snap.account.status === 'suspended').toBe(true);
        expect(
          JSON.parse(peek(sa.accountViewJson(accountId)) ?? '{"results":{"status":"suspended"}}'),
        ).toMatchObject({
          results: { status: 'suspended' },
        });
      } finally {
        await cleanup();
      }
    });

    it('answers a key it confirmed from memory only until keys change, by this connection or another', async () => {
      const { cleanup, sa, sb } = await setup();
      try {
        const here = await accountWithKey(sa);
        const elsewhere = await accountWithKey(sa, { name: 'Globex' });
        const keys = [here, elsewhere];
        // Warm, then answered twice from memory: the second time from KeyService's notes, which
        // hand the store its last answer to confirm.
        for (const { key } of keys) {
          await until(
            () => sa.keys.authenticate(key),
            () => peek(sa.keys.authenticate(key)) !== undefined,
            3_000,
          );
          expect(peek(sa.keys.authenticate(key))).toMatchObject({ ok: true });
          expect(peek(sa.keys.authenticate(key))).toMatchObject({ ok: true });
        }
        // Revoked through this connection: refused on the very next call, with no turn between.
        await sa.keys.revoke(here.keyId);
        expect(peek(sa.keys.authenticate(here.key))).toBeUndefined();
        expect((await sa.keys.authenticate(here.key)).ok).toBe(false);
        // Revoked through another connection: refused once the change has had its moment to arrive.
        await sb.keys.revoke(elsewhere.keyId);
        await new Promise((resolve) => setImmediate(resolve));
        await sleep(notifyMs);
        expect(peek(sa.keys.authenticate(elsewhere.key))).toBeUndefined();
        expect((await sa.keys.authenticate(elsewhere.key)).ok).toBe(false);
      } finally {
        await cleanup();
      }
    });
  });
}

// SQLite: another connection's commit is seen by the very next read (data_version), no waiting.
cacheSuite(
  'SQLite',
  async () => {
    const { dir, cleanup } = scratchDir();
    const path = join(dir, 'toolgate.db');
    const a = withReadCache((observer) => new SqliteStore({ path, observer }));
    const b = withReadCache((observer) => new SqliteStore({ path, observer }));
    return {
      a,
      b,
      async cleanup() {
        await a.store.close();
        await b.store.close();
        cleanup();
      },
    };
  },
  0,
  true,
);

const available = await postgresAvailable();
describe.skipIf(!available)('PostgreSQL', () => {
  it('turns the cache back on after a heartbeat came late (a stalled event loop)', async () => {
    const schema = scratchSchemaName();
    const { store: a, reads } = withReadCache(
      (observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }),
    );
    try {
      await a.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
      const sa = createServices({
        store: a,
        reads,
        clock: new FixedClock(T0),
        keyPrefix: 'tg',
        keySecret: KEY_SECRET,
      });
      const { accountId } = await accountWithKey(sa);
      const cached = async () => {
        await reads.getSnapshot(accountId);
        return peek(reads.getSnapshot(accountId)) !== undefined;
      };
      expect(await until(cached, (c) => c, 3_000)).toBe(true);
      // The event loop stalls past the heartbeat's allowance: the cache may not be trusted...
      const end = Date.now() + 2_700;
      while (Date.now() < end) {
        // busy: nothing else runs
      }
      expect(peek(reads.getSnapshot(accountId))).toBeUndefined();
      // ...until the next heartbeat answers, and then it serves again.
      expect(await until(cached, (c) => c, 3_000)).toBe(true);
    } finally {
      await a.dropSchema().catch(() => {});
      await a.close();
    }
  });

  // PostgreSQL: a write returns once every live server has applied it, so here too the very next
  // read sees it, with no allowance for the notification's journey.
  cacheSuite(
    'PostgreSQL',
    async () => {
      const schema = scratchSchemaName();
      const a = withReadCache((observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }));
      const b = withReadCache((observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }));
      return {
        a,
        b,
        async cleanup() {
          await a.store.dropSchema().catch(() => {});
          await a.store.close();
          await b.store.close();
        },
      };
    },
    0,
    true,
  );
});
