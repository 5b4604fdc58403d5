/**
 * @module Answers never cross on /mcp: many callers at once over real sockets, all using the same
 * JSON-RPC ids, and every answer is its own caller's (its account, its id, and exactly what that
 * account's HTTP call answers), in both protocol eras and in batches, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../postgres.js';
import {
  type Backend,
  type CrossingApp,
  crossingApp,
  type Era,
  type Exchange,
  type Fleet,
  fleet,
  headers,
  httpReference,
  judge,
  type Method,
  matchBatch,
  message,
  type Outgoing,
  openPool,
  type Posted,
  postAll,
  type RpcId,
  renameAll,
  type Verdict,
} from './crossing.js';

const ACCOUNTS = 50;
const KEYS_EACH = 4;
/** Two calls per key. */
const CALLS = 400;
/** Enough that hundreds of requests are on the wire at once, not queued behind a few sockets. */
const CONNECTIONS = 100;
const ERAS: readonly Era[] = ['2025-06-18', '2026-07-28'];

const backends: Backend[] = (await postgresAvailable()) ? ['SQLite', 'PostgreSQL'] : ['SQLite'];

/** The verdict as the assertion compares it: every count, so that a failure says how many of each. */
const counts = ({ examples: _, ...tally }: Verdict) => tally;
const clean = (answered: number) => ({ answered, crossed: 0, wrongId: 0, unlike: 0, failed: 0 });

describe.each(backends)('/mcp on %s: answers never cross', { timeout: 60_000 }, (backend) => {
  let app: CrossingApp;
  let f: Fleet;
  beforeAll(async () => {
    app = await crossingApp(backend);
    f = await fleet(app.services, ACCOUNTS, KEYS_EACH);
  }, 60_000);
  afterAll(async () => app?.close());

  /**
   * One run: every account renamed for it, every request sent at once through a fresh pool, and each
   * answer held against its sender's HTTP answer, asked after the run (nothing changes during it).
   */
  async function run(
    label: string,
    requests: Outgoing[],
    exchanges: (answers: Posted[]) => Exchange[],
  ): Promise<{ verdict: Verdict; connections: number; inFlight: number }> {
    await renameAll(app.services, f.accounts, label);
    const conn = openPool(app, CONNECTIONS);
    let answers: Posted[];
    try {
      answers = await postAll(conn.pool, requests);
    } finally {
      await conn.close();
    }
    const reference = await httpReference(app, f.keys);
    return {
      verdict: judge(exchanges(answers), reference),
      connections: conn.accepted(),
      inFlight: conn.maxInFlight(),
    };
  }

  /** CALLS single tools/call get_account, call i from key i mod 200 (so each key twice), with the id `idOf(i)`. */
  async function calls(era: Era, label: string, idOf: (i: number) => RpcId) {
    const sent = Array.from({ length: CALLS }, (_, i) => ({
      from: f.keys[i % f.keys.length]!,
      id: idOf(i),
      method: 'tools/call' as const,
    }));
    const requests = sent.map((s) => ({
      path: '/mcp',
      headers: headers(era, s.from.key, s.method),
      body: JSON.stringify(message(era, s.id, s.method)),
    }));
    const outcome = await run(`${era} ${label}`, requests, (answers) =>
      sent.map((s, i) => ({ ...s, response: answers[i]!.body })),
    );
    expect(counts(outcome.verdict), outcome.verdict.examples.join('\n')).toEqual(clean(CALLS));
    // The pool opens a connection for each request it cannot put on an idle one: the calls really
    // were on the wire together.
    expect(outcome.connections).toBeGreaterThan(CONNECTIONS / 2);
    // PostgreSQL: each call waits on its account's read (renamed: not cached), so the server holds
    // many calls at once, and an answer kept anywhere shared while it waits would reach another
    // caller. SQLite reads do not wait: there a call is answered whole before the next is read, and
    // only what the server itself waits on (the SDK loading on first use, an upstream) puts calls
    // together; what SQLite still catches is an answer under another id, whatever the timing.
    if (backend === 'PostgreSQL') expect(outcome.inFlight).toBeGreaterThan(1);
  }

  for (const era of ERAS) {
    it(`${era}: 400 concurrent get_account calls from 200 keys of 50 accounts, every one id 1, each answered to its own caller`, () =>
      calls(era, 'id 1', () => 1));

    it(`${era}: the same with ids "1" and 0 mixed (each key sends both), each answered to its own caller under its own id`, () =>
      // Key k sends "1" then 0, or 0 then "1": calls side by side carry ids a careless map takes for one.
      calls(era, 'ids "1" and 0', (i) => ((i + Math.floor(i / f.keys.length)) % 2 === 0 ? '1' : 0)));
  }

  // JSON-RPC batches exist in the 2025-03-26 revision only: a 2026-07-28 batch is refused whole (400,
  // one JSON-RPC error with id null, no message of it served), so only 2025 batches are sent here.
  it('2025-03-26: concurrent batches from every key, each mixing ids 1, "1", 0 and an id all batches share over get_account and tools/list, each answer to its own caller under its own id', async () => {
    const ids: RpcId[] = [1, '1', 0, 'shared'];
    const batches = f.keys.map((from, b) => ({
      from,
      // Which id is the tools/list turns with the batch: each id is a call in some batches, a list in others.
      sent: ids.map((id, j) => ({
        id,
        method: ((b + j) % ids.length === 0 ? 'tools/list' : 'tools/call') as Method,
      })),
    }));
    const requests = batches.map(({ from, sent }) => ({
      path: '/mcp',
      headers: headers('2025-03-26', from.key),
      body: JSON.stringify(sent.map((m) => message('2025-06-18', m.id, m.method))),
    }));
    let sizes: number[] = [];
    const { verdict } = await run('batches', requests, (answers) => {
      sizes = answers.map((a) => (Array.isArray(a.body) ? a.body.length : -1));
      return batches.flatMap(({ from, sent }, b) => matchBatch(from, sent, answers[b]!));
    });
    expect(counts(verdict), verdict.examples.join('\n')).toEqual(clean(f.keys.length * ids.length));
    // One answer per message and none more: an extra answer would be someone else's.
    const uneven = sizes.filter((n) => n !== ids.length);
    expect(uneven.length, `batches not answered message for message: ${uneven.slice(0, 5)}`).toBe(0);
  });
});
