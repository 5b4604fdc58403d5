/**
 * @module The differential check of "answers never cross": a fleet of accounts with several keys
 * each on an app listening on a real socket (SQLite or PostgreSQL), MCP messages of either protocol
 * era with any JSON-RPC id, sent concurrently through a pool of real connections, and a judge that
 * holds every answer against what its own sender would get from the HTTP route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { buildApp } from '../../src/app.js';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { createServices, type Services } from '../../src/service/index.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { authHeaders, bearer } from '../calls.js';
import { ADMIN_TOKEN, KEY_SECRET, scratchApp, T0 } from '../helpers.js';
import { POSTGRES_URL, scratchSchemaName } from '../postgres.js';

export type Backend = 'SQLite' | 'PostgreSQL';
export type Era = '2025-06-18' | '2026-07-28';
export type RpcId = number | string;
export type Method = 'tools/call' | 'tools/list';

/**
 * Requests per second per key: the rate limit is on, as a server has it, but high enough that no
 * message of the test is refused. The fixed clock keeps one window for the whole file.
 */
const PER_KEY_PER_SECOND = 10_000;

export interface CrossingApp {
  url: string;
  app: FastifyInstance;
  services: Services;
  close(): Promise<void>;
}

/** The app listening on 127.0.0.1 on a scratch store of `backend`, with a per-key rate limit. */
export async function crossingApp(backend: Backend): Promise<CrossingApp> {
  if (backend === 'SQLite') {
    const h = await scratchApp({ perKeyPerSecond: PER_KEY_PER_SECOND });
    const url = await h.app.listen({ host: '127.0.0.1', port: 0 });
    return { url, app: h.app, services: h.services, close: () => h.close() };
  }
  const schema = scratchSchemaName();
  const { store, reads } = withReadCache(
    (observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }),
  );
  await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  const clock = new FixedClock(T0);
  const services = createServices({ store, reads, clock, keyPrefix: 'tg', keySecret: KEY_SECRET });
  const app = await buildApp({
    services,
    adminToken: ADMIN_TOKEN,
    rateLimits: { perKeyPerSecond: PER_KEY_PER_SECOND, authFailuresPerMinute: 0, clock },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    app,
    services,
    async close() {
      await app.close();
      await store.dropSchema().catch(() => {});
      await store.close();
    },
  };
}

export interface FleetKey {
  key: string;
  accountId: string;
}

export interface Fleet {
  accounts: string[];
  /** Every key, listed with the accounts interleaved: neighbouring keys belong to different accounts. */
  keys: FleetKey[];
}

/** `accounts` accounts of `keysEach` keys each. */
export async function fleet(services: Services, accounts: number, keysEach: number): Promise<Fleet> {
  const perAccount: FleetKey[][] = [];
  for (let a = 0; a < accounts; a++) {
    const account = await services.accounts.create({ name: `Crossing ${a}` });
    if (!account.ok) throw new Error(account.error.message);
    const keys: FleetKey[] = [];
    for (let k = 0; k < keysEach; k++) {
      const key = await services.keys.create(account.value.id, `crossing ${a}.${k}`);
      if (!key.ok) throw new Error(key.error.message);
      keys.push({ key: key.value.key, accountId: account.value.id });
    }
    perAccount.push(keys);
  }
  return {
    accounts: perAccount.map((keys) => keys[0]!.accountId),
    keys: Array.from(
      { length: accounts * keysEach },
      (_, i) => perAccount[i % accounts]![Math.floor(i / accounts)]!,
    ),
  };
}

/**
 * Every account renamed for `run`: what each answers changes from run to run, and the server's
 * cached view of each account is dropped, so that on PostgreSQL every call of the run waits on a
 * read from the database and the calls are in the server together.
 */
export async function renameAll(services: Services, accounts: readonly string[], run: string): Promise<void> {
  for (const [a, id] of accounts.entries()) {
    const renamed = await services.accounts.update(id, { name: `Crossing ${a}, ${run}` });
    if (!renamed.ok) throw new Error(renamed.error.message);
  }
}

const ACCEPT = 'application/json, text/event-stream';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'toolgate-test-v2', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** One JSON-RPC request as a client of `era` writes it (2026-07-28: the `_meta` envelope a v2 client sends). */
export function message(era: Era, id: RpcId, method: Method): Record<string, unknown> {
  const params: Record<string, unknown> =
    method === 'tools/call' ? { name: 'get_account', arguments: {} } : {};
  if (era === '2026-07-28') params._meta = META;
  return { jsonrpc: '2.0', id, method, params };
}

/** The HTTP headers a client of `era` sends with one message (a batch: with none of its own). */
export function headers(era: string, key: string, method?: Method): Record<string, string> {
  const h: Record<string, string> = {
    authorization: bearer(key),
    'content-type': 'application/json',
    accept: ACCEPT,
    'mcp-protocol-version': era,
  };
  if (era === '2026-07-28' && method) {
    h['mcp-method'] = method;
    if (method === 'tools/call') h['mcp-name'] = 'get_account';
  }
  return h;
}

export interface Watched {
  pool: Pool;
  /** Connections the server accepted while the pool was open. */
  accepted(): number;
  /** The most requests the server held at once (read, not yet answered) while the pool was open. */
  maxInFlight(): number;
  close(): Promise<void>;
}

/** A pool of real connections to the app, and what the server saw of them. */
export function openPool(app: CrossingApp, connections: number): Watched {
  const server = app.app.server;
  let accepted = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const onConnection = () => {
    accepted++;
  };
  const onRequest = (_req: IncomingMessage, res: ServerResponse) => {
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    res.once('close', () => inFlight--);
  };
  server.on('connection', onConnection);
  server.on('request', onRequest);
  const pool = new Pool(app.url, { connections, pipelining: 1 });
  return {
    pool,
    accepted: () => accepted,
    maxInFlight: () => maxInFlight,
    async close() {
      server.off('connection', onConnection);
      server.off('request', onRequest);
      await pool.close();
    },
  };
}

export interface Posted {
  status: number;
  body: unknown;
}

export interface Outgoing {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * Every request at once (the pool spreads them over its connections), answers in the order sent.
 * What is not answered within `deadlineMs` is given up, so that an answer sent to another caller
 * leaves a failure to count rather than a test that runs out of time without saying why.
 */
export function postAll(p: Pool, requests: readonly Outgoing[], deadlineMs = 20_000): Promise<Posted[]> {
  const signal = AbortSignal.timeout(deadlineMs);
  return Promise.all(
    requests.map(async (r) => {
      let status: number;
      let text: string;
      try {
        const res = await p.request({
          method: 'POST',
          path: r.path,
          headers: r.headers,
          body: r.body,
          signal,
        });
        status = res.statusCode;
        text = await res.body.text();
      } catch (err) {
        return { status: 0, body: `no answer: ${err instanceof Error ? err.message : String(err)}` };
      }
      try {
        return { status, body: JSON.parse(text) as unknown };
      } catch {
        // Kept as text: the judge counts it as a failure and shows what came.
        return { status, body: text };
      }
    }),
  );
}

/** What each account's get_account says over HTTP now, asked with one of its keys: what its MCP answers are held to. */
export async function httpReference(
  app: CrossingApp,
  keys: readonly FleetKey[],
): Promise<Map<string, unknown>> {
  const owners = [...new Map(keys.map((k) => [k.accountId, k])).values()];
  const conn = openPool(app, 16);
  let answers: Posted[];
  try {
    answers = await postAll(
      conn.pool,
      owners.map((k) => ({
        path: '/api/v1/tools/get_account',
        headers: authHeaders(k.key, {}, true),
        body: '{}',
      })),
    );
  } finally {
    await conn.close();
  }
  return new Map(
    owners.map((k, i) => {
      const a = answers[i]!;
      if (a.status !== 200)
        throw new Error(`HTTP get_account of ${k.accountId}: ${a.status} ${JSON.stringify(a.body)}`);
      return [k.accountId, a.body];
    }),
  );
}

/** One message sent, and the JSON-RPC response that came back for it (or what came instead). */
export interface Exchange {
  from: FleetKey;
  id: RpcId;
  method: Method;
  response: unknown;
}

export interface Verdict {
  answered: number;
  /** Carries another account than its sender's. */
  crossed: number;
  /** Its JSON-RPC id is not the one sent (1 and "1" are different ids). */
  wrongId: number;
  /** Its sender's account, but not what that account's HTTP call answers. */
  unlike: number;
  /** No JSON-RPC response (an HTTP error, a refusal, no answer in time), an error, or no tool result. */
  failed: number;
  /** The first few problems, for the failure message. */
  examples: string[];
}

type Problem = 'crossed' | 'wrongId' | 'unlike' | 'failed';

/** The id an answer came back under, first in an example (an SDK answer writes it last). */
const answerId = (response: unknown) =>
  response && typeof response === 'object' && 'id' in response ? `id ${JSON.stringify(response.id)}: ` : '';

function judgeOne(x: Exchange, reference: ReadonlyMap<string, unknown>): Problem | undefined {
  const r = x.response as { id?: unknown; result?: Record<string, unknown> } | undefined;
  if (!r || typeof r !== 'object' || !('id' in r)) return 'failed';
  if (!Object.is(r.id, x.id)) return 'wrongId';
  if (!r.result) return 'failed';
  if (x.method === 'tools/list') return Array.isArray(r.result.tools) ? undefined : 'failed';
  const content = r.result.structuredContent as { results?: { id?: unknown } } | undefined;
  const account = content?.results?.id;
  if (typeof account !== 'string' || r.result.isError) return 'failed';
  if (account !== x.from.accountId) return 'crossed';
  const text = (r.result.content as { text?: string }[] | undefined)?.[0]?.text;
  // The text is the same answer as JSON, for clients that read only text.
  const same = isDeepStrictEqual(content, reference.get(account)) && isDeepStrictEqual(parsed(text), content);
  return same ? undefined : 'unlike';
}

function parsed(text: string | undefined): unknown {
  try {
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return text;
  }
}

/** Every exchange held against its sender: how many crossed, came back under another id, differ from HTTP, or failed. */
export function judge(exchanges: readonly Exchange[], reference: ReadonlyMap<string, unknown>): Verdict {
  const v: Verdict = { answered: 0, crossed: 0, wrongId: 0, unlike: 0, failed: 0, examples: [] };
  for (const x of exchanges) {
    const problem = judgeOne(x, reference);
    if (!problem) {
      v.answered++;
      continue;
    }
    // The first two of each kind, so that a crossing is shown even among many failures.
    if (v[problem]++ < 2)
      v.examples.push(
        `${problem}: ${x.method} id ${JSON.stringify(x.id)} from ${x.from.accountId} got ${answerId(x.response)}${JSON.stringify(x.response)?.slice(0, 300)}`,
      );
  }
  return v;
}

/** The responses of one batch answer, each matched to the message sent under its id (ids compared with their type). */
export function matchBatch(
  from: FleetKey,
  sent: readonly { id: RpcId; method: Method }[],
  answer: Posted,
): Exchange[] {
  const responses = Array.isArray(answer.body) ? (answer.body as { id?: unknown }[]) : [];
  const byId = new Map<unknown, unknown[]>();
  for (const r of responses) byId.set(r?.id, [...(byId.get(r?.id) ?? []), r]);
  return sent.map((m) => {
    const mine = byId.get(m.id) ?? [];
    if (mine.length === 1) return { from, id: m.id, method: m.method, response: mine[0] };
    // No batch answer at all is a failure; answers under other ids (or two under this one) a wrong id.
    const response =
      responses.length === 0
        ? { status: answer.status, body: answer.body }
        : { id: null, underThisId: mine, idsAnswered: responses.map((r) => r?.id) };
    return { from, id: m.id, method: m.method, response };
  });
}
