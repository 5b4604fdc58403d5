/**
 * @module Tools over MCP against the same tools over HTTP, on the same toolgate server: what the
 * second front door costs. The baseline side is toolgate's own HTTP route; the toolgate side the same
 * call as an MCP `tools/call`. get_account in each protocol era (2025: the stateless transport v1
 * clients are served with; 2026-07-28: the per-request envelope v2 clients negotiate), and the
 * proxied scenarios' metered catalogue tool in the 2026-07-28 era (the era with the most to read per
 * request). The scenarios speak only HTTP to the server, so they measure whatever serves /mcp.
 */
import { accountTotals } from '../lib/admin.js';
import type { LoadRequest } from '../lib/load.js';
import { MCP_REVISION, type McpEra, mcpToolCall } from '../lib/mcp-requests.js';
import { METERED_TOOL, proxiedFixture, RECORDS_PER_CALL } from '../lib/proxied.js';
import { type Fixture, type Note, PEAK_RSS_MIB, type Scenario } from './scenario.js';

/** The targets for MCP against HTTP on the same server: at least 0.60x, aiming at 0.90x. */
const TARGET = 0.6;
const STRETCH = 0.9;

/** The metered tool's arguments, the proxied scenarios' own. */
const SEARCH_ARGS = { q: 'x' };

function httpRequests(f: Fixture, tool: string, args: Record<string, unknown>): LoadRequest[] {
  const body = JSON.stringify(args);
  return f.accounts.map((a) => ({
    method: 'POST',
    path: `/api/v1/tools/${tool}`,
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
    body,
  }));
}

function mcpRequests(f: Fixture, era: McpEra, tool: string, args: Record<string, unknown>): LoadRequest[] {
  const { headers, body } = mcpToolCall(era, tool, args);
  return f.accounts.map((a) => ({
    method: 'POST',
    path: '/mcp',
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json', ...headers },
    body,
  }));
}

/** Both sides are the one toolgate process: its HTTP route is the reference. */
const againstOwnHttp = (f: Fixture): Fixture => ({
  ...f,
  baseline: { name: 'toolgate HTTP', url: f.toolgate.url, child: f.toolgate.child },
});

/** The tool result of a JSON-RPC answer, or what is wrong with the answer. */
function toolResult(body: unknown): { structured: Record<string, unknown> } | string {
  const b = body as { result?: { isError?: boolean; structuredContent?: Record<string, unknown> } } | null;
  if (!b?.result) return `no JSON-RPC result: ${JSON.stringify(body).slice(0, 200)}`;
  if (b.result.isError) return `an error result: ${JSON.stringify(b.result).slice(0, 200)}`;
  if (!b.result.structuredContent) return 'no structuredContent';
  return { structured: b.result.structuredContent };
}

function mcpGetAccount(era: McpEra): Scenario {
  return {
    id: `mcp_${era}`,
    group: 'mcp',
    title: `get_account over MCP (${MCP_REVISION[era]})`,
    description: `POST /mcp tools/call get_account (${era === '2025' ? 'the 2025 revisions, stateless' : 'the 2026-07-28 revision'}) against POST /api/v1/tools/get_account on the same server, rotating over every seeded key`,
    rotates: 'key',
    target: TARGET,
    stretch: STRETCH,
    peakRssMib: PEAK_RSS_MIB,
    prepare: async (f) => againstOwnHttp(f),
    baselineRequests: (f) => httpRequests(f, 'get_account', {}),
    requests: (f) => mcpRequests(f, era, 'get_account', {}),
    check(body, f) {
      const r = toolResult(body);
      if (typeof r === 'string') return r;
      if ((r.structured.results as { id?: unknown } | undefined)?.id !== f.accounts[0]?.id)
        return 'not the account of the key';
      return null;
    },
  };
}

/** The search windows' calls before the metered tool's load over MCP, per toolgate. */
const searchesBefore = new Map<Fixture['toolgate'], number>();

function mcpMeteredTool(era: McpEra): Scenario {
  const args = JSON.stringify(SEARCH_ARGS);
  return {
    id: 'mcp_metered',
    group: 'mcp',
    title: `metered catalogue tool over MCP (${MCP_REVISION[era]})`,
    description: `POST /mcp tools/call ${METERED_TOOL} ${args} (the ${MCP_REVISION[era]} revision) against POST /api/v1/tools/${METERED_TOOL} ${args} on the same server, rotating over every seeded key: the proxied scenarios' metered tool (category search, 10 records a call) and upstream`,
    rotates: 'key',
    target: TARGET,
    peakRssMib: PEAK_RSS_MIB,
    async prepare(f) {
      const fixture = await proxiedFixture(f, METERED_TOOL, 'metered');
      // Counted from here: the windows hold the proxied scenarios' calls, and the poll that waited for the tool.
      searchesBefore.set(f.toolgate, (await searches(f)).requests);
      return againstOwnHttp(fixture);
    },
    baselineRequests: (f) => httpRequests(f, METERED_TOOL, SEARCH_ARGS),
    requests: (f) => mcpRequests(f, era, METERED_TOOL, SEARCH_ARGS),
    check(body) {
      const r = toolResult(body);
      if (typeof r === 'string') return r;
      const b = r.structured as { status?: unknown; results?: unknown; metadata?: Record<string, unknown> };
      if (b.status !== 'ok') return `status is ${JSON.stringify(b.status)}, not "ok"`;
      if (!Array.isArray(b.results) || b.results.length !== RECORDS_PER_CALL)
        return `results is not the upstream's ${RECORDS_PER_CALL} results`;
      if (b.metadata?.fair_use === undefined) return 'metadata.fair_use is missing (the tool is not metered)';
      if (b.metadata.tokens_charged !== 0) return 'metadata.tokens_charged is not 0';
      return null;
    },
    /** Both doors meter into the same windows: their 2xx answers together are the calls counted. */
    async afterwards(f, totals) {
      const now = await searches(f);
      const counted = now.requests - (searchesBefore.get(f.toolgate) ?? 0);
      const answered = totals.ok + totals.baseline.ok;
      const slack = (totals.runs + totals.baseline.runs) * totals.connections;
      const extra = counted - answered;
      const notes: Note[] = [
        extra < 0 || extra > slack
          ? {
              level: 'warning',
              text: `toolgate counted ${counted} metered calls for ${answered} 2xx answers over MCP and HTTP (at most ${slack} more can be answered after the runs stop)`,
            }
          : {
              level: 'info',
              text: `metering adds up: toolgate counted ${counted} calls for ${totals.ok} 2xx answers over MCP and ${totals.baseline.ok} over HTTP (+${extra} answered after a run stopped; at most ${slack})`,
            },
      ];
      if (now.records !== now.requests * RECORDS_PER_CALL)
        notes.push({
          level: 'warning',
          text: `toolgate counted ${now.records} records for ${now.requests} calls, not ${RECORDS_PER_CALL} a call`,
        });
      return notes;
    },
  };
}

function searches(f: Fixture) {
  return accountTotals(f.toolgate.url, f.toolgate.adminToken, f.accounts, 'search');
}

export const mcp2025 = mcpGetAccount('2025');
export const mcp2026 = mcpGetAccount('2026');
export const mcpMetered = mcpMeteredTool('2026');
