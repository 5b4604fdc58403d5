/**
 * The usage history across real server processes: two servers on one PostgreSQL database add up
 * exactly (each server's in-memory counts written once, additively, into the same rows), a graceful
 * stop writes its last counts, and a SIGKILL loses at most the last second of counts (the flush
 * interval) and never a consumption.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageCounts } from '../../src/domain/usage-history.js';
import { callTool } from '../calls.js';
import { scratchDir } from '../helpers.js';
import { postgresAvailable, scratchPostgresStore } from '../postgres.js';
import { accountWithKey, adminCall, E2E_ADMIN_TOKEN, planWithLimit } from './admin-client.js';
import { postgresPair } from './postgres-pair.js';
import { type ServerProcess, startServer } from './process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The UTC day `n` days from now, YYYY-MM-DD. */
const dayFromNow = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
/** Yesterday to tomorrow: the calls of a run that crosses UTC midnight are all in it. */
const from = () => dayFromNow(-1);
const to = () => dayFromNow(1);

/** `POST /api/v1/tools/<tool>` with `key`; the status. */
async function call(url: string, key: string, tool: string, body: unknown = {}): Promise<number> {
  return (await callTool(url, key, tool, body)).status;
}

/** `n` calls, `concurrency` at a time; the statuses. */
async function burst(n: number, concurrency: number, one: (i: number) => Promise<number>): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) statuses.push(await one(next++));
    }),
  );
  return statuses;
}

/** { status: count }, so a failure shows every status that came back. */
function tally(statuses: number[]): Record<number, number> {
  const t: Record<number, number> = {};
  for (const s of statuses) t[s] = (t[s] ?? 0) + 1;
  return t;
}

type Counts = UsageCounts;
const ZERO: Counts = { calls: 0, tokens: 0, records: 0, withData: 0, withoutData: 0, failed: 0 };

/** The sum of every group of a history. */
function sum(groups: readonly Counts[]): Counts {
  const s = { ...ZERO };
  for (const g of groups) for (const k of Object.keys(s) as (keyof Counts)[]) s[k] += g[k];
  return s;
}

const available = await postgresAvailable();

describe.skipIf(!available)('two servers on PostgreSQL', () => {
  const servers = postgresPair({ TOOLGATE_RATE_LIMIT: '0' });

  it('add up exactly, count nothing twice, and a graceful stop writes its last counts', async () => {
    const { a, b, schema } = servers;
    // Created through A; used on both: both servers count into the same rows (account, day, key,
    // tool, surface), which only additive upserts add up.
    const { id, key } = await accountWithKey(a.url);
    const scratch = scratchPostgresStore(schema);
    const stored = async () => sum(await scratch.store.usageHistory.history(id, from(), to(), 'day'));
    const storedByTool = async () =>
      Object.fromEntries(
        (await scratch.store.usageHistory.history(id, from(), to(), 'tool')).map(({ group, ...c }) => [
          group,
          c,
        ]),
      );
    try {
      // On A every 10th call fails (a period get_usage does not know: 400), on B every 13th.
      const failsOnA = (i: number) => i % 10 === 0;
      const failsOnB = (i: number) => i % 13 === 0;
      const one = (url: string, fails: boolean) =>
        fails ? call(url, key, 'get_usage', { period: 'year' }) : call(url, key, 'get_account');
      const [onA, onB] = await Promise.all([
        burst(165, 8, (i) => one(a.url, failsOnA(i))),
        burst(140, 8, (i) => one(b.url, failsOnB(i))),
      ]);
      expect(tally(onA)).toEqual({ 200: 148, 400: 17 });
      expect(tally(onB)).toEqual({ 200: 129, 400: 11 });
      const expected: Counts = { ...ZERO, calls: 305, withoutData: 277, failed: 28 };

      // Both write within about a second: wait until the store has at least everything (up to 5 s)...
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(100)) {
        if ((await stored()).calls >= expected.calls) break;
      }
      // ...then two more flush intervals: a count written a second time would show by then.
      await sleep(2_200);
      expect(await stored()).toEqual(expected);
      expect(await storedByTool()).toEqual({
        get_account: { ...ZERO, calls: 277, withoutData: 277 },
        get_usage: { ...ZERO, calls: 28, failed: 28 },
      });

      // get_usage on A: what is stored plus what A has not written (nothing now), not both.
      const today = dayFromNow(0);
      const storedToday = sum(await scratch.store.usageHistory.history(id, today, today, 'day'));
      const res = await callTool(a.url, key, 'get_usage', { period: 'today' });
      expect(res.status).toBe(200);
      const usage = (await res.json()) as { results: { start_date: string; totals: Record<string, number> } };
      expect(usage.results.start_date).toBe(today);
      expect(usage.results.totals).toEqual({
        calls: storedToday.calls,
        tokens: 0,
        records: 0,
        with_data: 0,
        without_data: storedToday.withoutData,
        failed: storedToday.failed,
      });
      // That get_usage call itself is counted (on A, written within a second).
      const afterGetUsage: Counts = { ...expected, calls: 306, withoutData: 278 };

      // A burst on B, and B stopped with SIGTERM the moment it is answered: B's timer has not
      // necessarily run since, so what B counted must be written on the way out. The store is
      // read as soon as B has exited, without waiting for anything.
      const last = await burst(60, 8, (i) => one(b.url, i % 6 === 0));
      expect(tally(last)).toEqual({ 200: 50, 400: 10 });
      expect(await b.stop('SIGTERM')).toBe(0);
      const afterStop = await stored();
      // A's own get_usage call may or may not have been written yet; B's 60 calls all must be.
      const fromA = afterStop.calls - 60 - expected.calls;
      expect([0, 1]).toContain(fromA);
      expect(afterStop).toEqual({
        ...ZERO,
        calls: expected.calls + fromA + 60,
        withoutData: expected.withoutData + fromA + 50,
        failed: expected.failed + 10,
      });
      // And once A has written too: everything, exactly once.
      await sleep(1_500);
      expect(await stored()).toEqual({
        ...afterGetUsage,
        calls: afterGetUsage.calls + 60,
        withoutData: afterGetUsage.withoutData + 50,
        failed: afterGetUsage.failed + 10,
      });
    } finally {
      await scratch.store.close();
    }
  });
});

describe('one server on SQLite, killed', () => {
  let dir: string;
  let cleanup: () => void;
  let restarted: ServerProcess | undefined;
  beforeAll(() => {
    ({ dir, cleanup } = scratchDir());
  });
  afterAll(async () => {
    await restarted?.stop();
    cleanup();
  });

  it('loses at most the last second of counts, never a consumption, and counts nothing twice', async () => {
    const dbPath = join(dir, 'toolgate.db');
    const env = {
      TOOLGATE_DATABASE_URL: `sqlite:${dbPath}`,
      TOOLGATE_ADMIN_TOKEN: E2E_ADMIN_TOKEN,
      TOOLGATE_RATE_LIMIT: '0',
      NODE_ENV: 'production',
    };
    const server = await startServer(env);
    expect((await adminCall(server.url, 'PUT', '/plans/large', planWithLimit(1_000_000))).status).toBe(200);
    const { id, key } = await accountWithKey(server.url, 'large');

    // Calls (counted in the history) and consumptions (committed with their answers), side by side.
    let sent = 0;
    /** When each call answered 200 came back. */
    const answeredAt: number[] = [];
    const otherCalls: number[] = [];
    let seq = 0;
    const granted: string[] = [];
    const otherConsumptions: number[] = [];
    /** Consumptions without an answer: cut short by the kill, they may or may not have been kept. */
    const unanswered: string[] = [];
    let killed = false;
    const caller = async () => {
      while (!killed) {
        sent++;
        try {
          const status = await call(server.url, key, 'get_account');
          if (status === 200) answeredAt.push(Date.now());
          else otherCalls.push(status);
        } catch {}
      }
    };
    const consumer = async () => {
      while (!killed) {
        const idem = `c-${seq++}`;
        try {
          const res = await adminCall(server.url, 'POST', `/accounts/${id}/usage`, {
            category: 'enrich',
            records: 1,
            idempotency_key: idem,
          });
          if (res.status === 200) granted.push(idem);
          else otherConsumptions.push(res.status);
        } catch {
          unanswered.push(idem);
        }
      }
    };
    const workers = [...Array.from({ length: 4 }, caller), consumer(), consumer()];
    await sleep(2_500);
    const killedAt = Date.now();
    expect(await server.stop('SIGKILL')).toBeNull();
    killed = true;
    await Promise.all(workers);
    expect(otherCalls).toEqual([]);
    expect(otherConsumptions).toEqual([]);
    expect(granted.length).toBeGreaterThan(50);
    expect(granted.length + unanswered.length).toBe(seq);

    // The server starts again on the same file.
    restarted = await startServer(env);
    const url = restarted.url;
    const used = async () =>
      (await adminCall(url, 'GET', `/accounts/${id}`)).body.fair_use.enrich.records['5h'].used as number;
    // (a) Every consumption answered 200 is in the windows; beyond them, at most the ones the kill
    // left without an answer.
    const usedAfterCrash = await used();
    expect(usedAfterCrash).toBeGreaterThanOrEqual(granted.length);
    expect(usedAfterCrash).toBeLessThanOrEqual(granted.length + unanswered.length);
    // Retried with their idempotency keys, the unanswered ones count once each: the windows then
    // hold exactly one consumption per key ever sent, none lost, none twice.
    for (const idem of unanswered) {
      const res = await adminCall(url, 'POST', `/accounts/${id}/usage`, {
        category: 'enrich',
        records: 1,
        idempotency_key: idem,
      });
      expect(res.status).toBe(200);
    }
    expect(await used()).toBe(seq);

    // (b) The calls counted: never more than were sent (a call in flight at the kill may have been
    // counted without its answer arriving), and at least every call answered 1.5 s before the kill.
    // A call is counted before its answer is sent, the counts are written every second, so the last
    // write before the kill took everything counted up to about a second before it; the bound
    // allows half a second more for a late timer on a busy 2-core machine.
    const history = async () =>
      (await adminCall(url, 'GET', `/accounts/${id}/usage/history?from=${from()}&to=${to()}&by=day`)).body
        .totals as { calls: number } & Record<string, number>;
    const afterCrash = await history();
    const beforeKill = answeredAt.filter((t) => t < killedAt - 1_500).length;
    expect(beforeKill).toBeGreaterThan(100);
    expect(afterCrash.calls).toBeGreaterThanOrEqual(beforeKill);
    expect(afterCrash.calls).toBeLessThanOrEqual(sent);
    expect(afterCrash).toEqual({
      calls: afterCrash.calls,
      tokens: 0,
      records: 0,
      with_data: 0,
      without_data: afterCrash.calls,
      failed: 0,
    });

    // (c) Nothing counted twice: the restarted server adds its own calls to what survived, and
    // only those (the lost second is not replayed, the kept counts are not written again).
    const more = await burst(40, 4, () => call(url, key, 'get_account'));
    expect(tally(more)).toEqual({ 200: 40 });
    expect(await restarted.stop('SIGTERM')).toBe(0);
    restarted = undefined;
    const db = new Database(dbPath, { readonly: true });
    try {
      const row = db
        .prepare(
          `SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(without_data), 0) AS without_data,
             coalesce(sum(failed), 0) AS failed FROM usage_daily WHERE account_id = ?`,
        )
        .get(id) as { calls: number; without_data: number; failed: number };
      expect(row).toEqual({ calls: afterCrash.calls + 40, without_data: afterCrash.calls + 40, failed: 0 });
    } finally {
      db.close();
    }
  });
});
