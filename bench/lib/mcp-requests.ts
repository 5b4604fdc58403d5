/**
 * @module MCP tools/call requests in each protocol era, the headers and body a client of that era
 * sends: the MCP bench scenarios and bench/mcp-cost.ts send exactly these.
 */

export type McpEra = '2025' | '2026';

export const MCP_ACCEPT = 'application/json, text/event-stream';

/** The revision a client of each era announces. */
export const MCP_REVISION: Record<McpEra, string> = { '2025': '2025-06-18', '2026': '2026-07-28' };

/** `tools/call name(args)` as a client of `era` sends it, with JSON-RPC id 1. */
export function mcpToolCall(
  era: McpEra,
  name: string,
  args: Record<string, unknown>,
): { headers: Record<string, string>; body: string } {
  const call = { name, arguments: args };
  // The 2025 revisions: no envelope; a stateless server answers a tools/call without initialize.
  if (era === '2025')
    return {
      headers: { accept: MCP_ACCEPT, 'mcp-protocol-version': MCP_REVISION[era] },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }),
    };
  // 2026-07-28: the per-request envelope and the headers that repeat it.
  return {
    headers: {
      accept: MCP_ACCEPT,
      'mcp-protocol-version': MCP_REVISION[era],
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        ...call,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MCP_REVISION[era],
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
        },
      },
    }),
  };
}

export const MCP_GET_ACCOUNT: Record<McpEra, { headers: Record<string, string>; body: string }> = {
  '2025': mcpToolCall('2025', 'get_account', {}),
  '2026': mcpToolCall('2026', 'get_account', {}),
};
