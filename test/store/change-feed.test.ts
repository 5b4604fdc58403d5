/**
 * PostgreSQL's change feed: a write returns only once every server with a cache has applied it, so
 * the next request anywhere sees it, here checked with no turn of the event loop in between (the
 * notification has no moment left to arrive in). A server that never acknowledges holds a write up
 * at most SETTLE_MS, and is named in a warning; one that says it leaves is not waited for.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { createServices } from '../../src/service/index.js';
import { type CachedReads, withReadCache } from '../../src/store/cached-reads.js';
import { SETTLE_MS } from '../../src/store/postgres/change-feed.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { accountWithKey, KEY_SECRET, T0 } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const services = ({ store, reads }: { store: Store; reads?: CachedReads }) =>
  createServices({
    store,
    ...(reads ? { reads } : {}),
    clock: new FixedClock(T0),
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
  });

/** What a read answered at once, from memory; undefined when it had to go to the database. */
function peek<T>(answer: T | Promise<T>): T | undefined {
  if (!(answer instanceof Promise)) return answer;
  answer.catch(() => {});
  return undefined;
}

type Warning = { message: string; fields: Record<string, unknown> };

async function setup() {
  const schema = scratchSchemaName();
  const warnings: Warning[] = [];
  const warn = (message: string, fields: Record<string, unknown>) => warnings.push({ message, fields });
  // Two servers, each with its read cache.
  const serverA = withReadCache((observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }));
  const serverB = withReadCache(
    (observer) => new PostgresStore({ url: POSTGRES_URL, schema, warn, observer }),
  );
  const a = serverA.store;
  const ra = serverA.reads;
  await a.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  const sa = services(serverA);
  const opened: PostgresStore[] = [a, serverB.store];
  return {
    a,
    ra,
    sa,
    sb: services(serverB),
    schema,
    warnings,
    warn,
    /** Another process: a server (with a read cache), or with `cache: false` a one-shot command. */
    open(options: { cache?: boolean } = {}) {
      const opts = { url: POSTGRES_URL, schema, warn };
      const { store } =
        options.cache === false
          ? { store: new PostgresStore(opts) }
          : withReadCache((observer) => new PostgresStore({ ...opts, observer }));
      opened.push(store);
      return store;
    },
    /** Until A serves this key and account from memory (its cache on once its feed has joined). */
    async warm(key: string, accountId: string) {
      const end = Date.now() + 5_000;
      while (peek(sa.keys.authenticate(key)) === undefined || peek(ra.getSnapshot(accountId)) === undefined) {
        if (Date.now() > end) throw new Error('the cache never came on');
        await sa.keys.authenticate(key);
        await ra.getSnapshot(accountId);
        await sleep(10);
      }
    },
    async cleanup() {
      await a.dropSchema().catch(() => {});
      for (const s of opened) await s.close();
    },
  };
}

/** `body` on a fresh pair of stores (and whatever it opens), closed and dropped after. */
async function withStores(body: (t: Awaited<ReturnType<typeof setup>>) => Promise<void>): Promise<void> {
  const t = await setup();
  try {
    await body(t);
  } finally {
    await t.cleanup();
  }
}

const available = await postgresAvailable();
describe.skipIf(!available)('PostgreSQL change feed', () => {
  it('a write on one server returns after the other has applied it: its cache is right at once', () =>
    withStores(async (t) => {
      for (let i = 0; i < 10; i++) {
        const { accountId, keyId, key } = await accountWithKey(t.sa);
        await t.warm(key, accountId);
        await t.sb.usage.record(accountId, { category: 'search', records: 2 });
        // No await between the write's answer and these reads: nothing else has run on A.
        expect(peek(t.ra.getSnapshot(accountId))).toBeUndefined();
        await t.warm(key, accountId);
        await t.sb.accounts.update(accountId, { status: 'suspended' });
        expect(peek(t.ra.getSnapshot(accountId))).toBeUndefined();
        await t.sb.keys.revoke(keyId);
        expect(peek(t.sa.keys.authenticate(key))).toBeUndefined();
        expect((await t.sa.keys.authenticate(key)).ok).toBe(false);
        expect((await t.ra.getSnapshot(accountId))?.account.status).toBe('suspended');
      }
      expect(t.warnings).toEqual([]);
    }));

  it('a process that has only just started (the CLI) also waits for the servers it has not heard yet', () =>
    withStores(async (t) => {
      for (let i = 0; i < 5; i++) {
        const { accountId, keyId, key } = await accountWithKey(t.sa);
        await t.warm(key, accountId);
        // Opened and written through at once: its listening connection is not even up yet.
        const cli = services({ store: t.open({ cache: false }) });
        expect((await cli.keys.revoke(keyId)).ok).toBe(true);
        expect(peek(t.sa.keys.authenticate(key))).toBeUndefined();
        while (peek(t.ra.getSnapshot(accountId)) === undefined) await t.ra.getSnapshot(accountId);
        const young = services({ store: t.open() });
        expect((await young.accounts.update(accountId, { status: 'suspended' })).ok).toBe(true);
        expect(peek(t.ra.getSnapshot(accountId))).toBeUndefined();
      }
      expect(t.warnings).toEqual([]);
    }));

  it('a start that finds nothing to migrate (each CLI command) leaves the servers their caches', () =>
    withStores(async (t) => {
      const { accountId, key } = await accountWithKey(t.sa);
      await t.warm(key, accountId);
      const cli = t.open({ cache: false });
      expect((await cli.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000))).applied).toEqual([]);
      await sleep(100);
      expect(peek(t.ra.getSnapshot(accountId))).toBeDefined();
      expect(peek(t.sa.keys.authenticate(key))).toMatchObject({ ok: true });
    }));

  it('waits at most SETTLE_MS for a server that never acknowledges, names it, and not at all once it leaves', () =>
    withStores(async (t) => {
      const silent = new pg.Client({ connectionString: POSTGRES_URL });
      await silent.connect();
      const channel = `toolgate_${t.schema}`;
      try {
        const { accountId } = await accountWithKey(t.sb);
        // B has listened long enough to go by what it has heard.
        await sleep(SETTLE_MS + 100);
        await silent.query('SELECT pg_notify($1, $2)', [channel, 'h silentpeer 7']);
        expect((await t.sb.accounts.update(accountId, { name: 'renamed' })).ok).toBe(true);
        expect(t.warnings).toHaveLength(1);
        expect(t.warnings[0]!.message).toMatch(/without every server acknowledging/);
        expect(t.warnings[0]!.fields.not_acknowledged_by).toBe('silentpeer');
        await silent.query('SELECT pg_notify($1, $2)', [channel, 'b silentpeer']);
        await sleep(50);
        expect((await t.sb.accounts.update(accountId, { name: 'renamed again' })).ok).toBe(true);
        expect(t.warnings).toHaveLength(1);
      } finally {
        await silent.end();
      }
    }));
});
