/**
 * @module get_account over MCP against get_account over HTTP, on the same toolgate server: what the
 * second front door costs. The baseline side is toolgate's own HTTP route; the toolgate side the same
 * call as an MCP `tools/call`, in each protocol era (2025: the stateless legacy transport the SDK
 * serves v1 clients with; 2026-07-28: the per-request envelope v2 clients negotiate).
 */
import type { LoadRequest } from '../lib/load.js';
import { MCP_GET_ACCOUNT, type McpEra } from '../lib/mcp-requests.js';
import type { Fixture, Scenario } from './scenario.js';

function httpRequests(f: Fixture): LoadRequest[] {
  return f.accounts.map((a) => ({
    method: 'POST',
    path: '/api/v1/tools/get_account',
    headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
    body: '{}',
  }));
}

function mcpScenario(era: McpEra): Scenario {
  return {
    id: `mcp_${era}`,
    group: 'mcp',
    title: `get_account over MCP (${era === '2025' ? '2025-06-18' : '2026-07-28'})`,
    description: `POST /mcp tools/call get_account (${era === '2025' ? 'the 2025 revisions, stateless' : 'the 2026-07-28 revision'}) against POST /api/v1/tools/get_account on the same server, rotating over every seeded key`,
    rotates: 'key',
    target: 0.5,
    // Both sides are the one toolgate process: the HTTP route is the reference.
    prepare: async (f) => ({
      ...f,
      baseline: { name: 'toolgate HTTP', url: f.toolgate.url, child: f.toolgate.child },
    }),
    baselineRequests: httpRequests,
    requests: (f) =>
      f.accounts.map((a) => ({
        method: 'POST',
        path: '/mcp',
        headers: {
          authorization: `Bearer ${a.key}`,
          'content-type': 'application/json',
          ...MCP_GET_ACCOUNT[era].headers,
        },
        body: MCP_GET_ACCOUNT[era].body,
      })),
    check(body, f) {
      const b = body as {
        result?: { isError?: boolean; structuredContent?: { results?: { id?: unknown } } };
      };
      if (!b?.result) return `no JSON-RPC result: ${JSON.stringify(body).slice(0, 200)}`;
      if (b.result.isError) return `an error result: ${JSON.stringify(b.result).slice(0, 200)}`;
      if (b.result.structuredContent?.results?.id !== f.accounts[0]?.id) return 'not the account of the key';
      return null;
    },
  };
}

export const mcp2025 = mcpScenario('2025');
export const mcp2026 = mcpScenario('2026');
