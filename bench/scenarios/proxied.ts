/**
 * @module proxied: a catalogue tool forwarding to an upstream service, toolgate against a bare
 * Fastify proxy (bench/proxy-baseline.ts) calling the same upstream (bench/upstream.ts) with the same
 * HTTP client. Three scenarios, all selected by `--only proxied`: a metered tool (fair use checked,
 * records counted and committed atomically with every call), a free one (no metering: what the
 * gateway itself costs on top of the forwarding), and a charged one (metered, and ten tokens a call
 * taken from the balance in the same commit: the ledger's writes; judged on PostgreSQL against
 * SQLite's figure of the same run).
 */
import { cpus } from 'node:os';
import { accountTotals } from '../lib/admin.js';
import {
  CHARGED_TOOL,
  FREE_TOOL,
  METERED_TOOL,
  type ProxiedKind,
  proxiedFixture,
  RECORDS_PER_CALL,
  TOKENS_PER_RECORD,
} from '../lib/proxied.js';
import { type Fixture, type Note, PEAK_RSS_MIB, type Scenario, type ToolgateTotals } from './scenario.js';

const BODY = '{"q":"x"}';
const TOKENS_PER_CALL = RECORDS_PER_CALL * TOKENS_PER_RECORD;

const WHAT: Record<ProxiedKind, string> = {
  metered: 'a metered catalogue tool (category search, 10 records a call, 0 tokens)',
  free: 'a free catalogue tool (no metering)',
  charged: `a metered catalogue tool charging a token a record (category search, 10 records and ${TOKENS_PER_CALL} tokens a call)`,
};

/** Each toolgate's search requests and token balances before the charged tool's load. */
const before = new Map<Fixture['toolgate'], { requests: number; tokenBalance: number }>();

function proxied(
  id: string,
  tool: string,
  kind: ProxiedKind,
  target?: number,
  postgresTarget?: number,
): Scenario {
  const metered = kind !== 'free';
  const charge = kind === 'charged' ? TOKENS_PER_CALL : 0;
  return {
    id,
    group: 'proxied',
    title: `proxied ${kind}`,
    description: `POST /api/v1/tools/${tool} ${BODY} with a bearer API key, rotating over every seeded key: ${WHAT[kind]} forwarding to the bench's upstream; the baseline forwards to the same upstream with toolgate's own undici client`,
    rotates: 'key',
    // The targets are toolgate's on SQLite; on PostgreSQL, where one is, against SQLite's figure.
    ...(target === undefined ? {} : { target: { sqlite: target } }),
    ...(postgresTarget === undefined ? {} : { postgresTarget }),
    peakRssMib: PEAK_RSS_MIB,
    async prepare(f) {
      const fixture = await proxiedFixture(f, tool, kind);
      if (kind === 'charged') before.set(f.toolgate, await totals(f));
      return fixture;
    },
    requests: (f) =>
      f.accounts.map((a) => ({
        method: 'POST',
        path: `/api/v1/tools/${tool}`,
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
        body: BODY,
      })),
    check(body) {
      const b = body as {
        status?: unknown;
        results?: unknown;
        metadata?: { fair_use?: unknown; tokens_charged?: unknown };
      } | null;
      if (b?.status !== 'ok') return `status is ${JSON.stringify(b?.status)}, not "ok"`;
      if (!Array.isArray(b.results) || b.results.length !== RECORDS_PER_CALL)
        return `results is not the upstream's ${RECORDS_PER_CALL} results`;
      if (b.metadata?.tokens_charged !== charge) return `metadata.tokens_charged is not ${charge}`;
      if (metered !== (b.metadata?.fair_use !== undefined))
        return metered
          ? 'metadata.fair_use is missing (the tool is not metered)'
          : 'a free tool answered fair_use';
      return null;
    },
    async afterwards(f, runTotals) {
      const notes: Note[] = [
        {
          level: 'info',
          text: `one upstream process (node:http, a precomputed ~1 KB answer) serves both sides; it, the server under test and wrk share the ${cpus().length} cores, unpinned (the bench pins nothing): the upstream's CPU is measured and shown beside the server's`,
        },
      ];
      if (metered) notes.push(...(await addsUp(f, runTotals, kind)));
      return notes;
    },
  };
}

async function totals(f: Fixture) {
  return accountTotals(f.toolgate.url, f.toolgate.adminToken, f.accounts, 'search');
}

/**
 * The metered tools' calls add up: the `search` windows against the 2xx answers, 10 records each,
 * and for the charged tool the tokens taken. The metered tool's windows are its scenario's alone (it
 * runs first); the charged tool's count from what they held before its load.
 */
async function addsUp(f: Fixture, runTotals: ToolgateTotals, kind: ProxiedKind): Promise<Note[]> {
  const notes: Note[] = [];
  const start = kind === 'charged' ? before.get(f.toolgate) : undefined;
  const now = await totals(f);
  const requests = now.requests - (start?.requests ?? 0);
  // The records are counted over every call in the windows, whichever tool made it.
  const records = now.records;
  // The polls that waited for the tool to be served counted one call more than the load.
  const expected = runTotals.ok + (kind === 'charged' ? 0 : 1);
  const slack = runTotals.runs * runTotals.connections;
  const extra = requests - expected;
  if (extra < 0 || extra > slack)
    notes.push({
      level: 'warning',
      text: `toolgate counted ${requests} metered calls for ${expected} 2xx answers (at most ${slack} more can be answered after the runs stop)`,
    });
  else
    notes.push({
      level: 'info',
      text: `metering adds up: toolgate counted ${requests} calls for ${expected} 2xx answers (+${extra} answered after a run stopped; at most ${slack})`,
    });
  if (records !== now.requests * RECORDS_PER_CALL)
    notes.push({
      level: 'warning',
      text: `toolgate counted ${records} records for ${now.requests} calls, not ${RECORDS_PER_CALL} a call`,
    });
  if (start) {
    const charged = start.tokenBalance - now.tokenBalance;
    if (charged !== requests * TOKENS_PER_CALL)
      notes.push({
        level: 'warning',
        text: `toolgate took ${charged} tokens for ${requests} charged calls, not ${TOKENS_PER_CALL} a call`,
      });
    else
      notes.push({
        level: 'info',
        text: `charges add up: ${charged} tokens taken for ${requests} calls, ${TOKENS_PER_CALL} each`,
      });
  }
  return notes;
}

export const proxiedMetered = proxied('proxied_metered', METERED_TOOL, 'metered', 0.9);
export const proxiedFree = proxied('proxied_free', FREE_TOOL, 'free', 0.9);
// Charged: 0.80x of the bare forwarder on SQLite, and on PostgreSQL 0.80x of SQLite's pace in the same run.
export const proxiedCharged = proxied('proxied_charged', CHARGED_TOOL, 'charged', 0.8, 0.8);
