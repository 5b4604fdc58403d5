/**
 * @module get_account as an MCP tools/call in each protocol era, the headers and body a client of
 * that era sends: the MCP bench scenarios and bench/mcp-cost.ts send exactly these.
 */

export type McpEra = '2025' | '2026';

export const MCP_ACCEPT = 'application/json, text/event-stream';

const call = { name: 'get_account', arguments: {} };

export const MCP_GET_ACCOUNT: Record<McpEra, { headers: Record<string, string>; body: string }> = {
  // The 2025 revisions: no envelope; a stateless server answers a tools/call without initialize.
  '2025': {
    headers: { accept: MCP_ACCEPT, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }),
  },
  // 2026-07-28: the per-request envelope and the headers that repeat it.
  '2026': {
    headers: {
      accept: MCP_ACCEPT,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'get_account',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        ...call,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
        },
      },
    }),
  },
};
