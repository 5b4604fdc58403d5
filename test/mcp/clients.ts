/**
 * The MCP SDK's real clients of both lines, connected over a real socket with a bearer key: v1
 * (`@modelcontextprotocol/sdk`, the 2025 handshake) and v2 (`@modelcontextprotocol/client`,
 * negotiating the 2026-07-28 revision). Tests run the same sentences against each.
 */
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bearer } from '../calls.js';

export interface McpResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
}

/** What the tests need of either client. */
export interface McpClient {
  line: 'v1' | 'v2';
  /** The protocol revision the client speaks with the server. */
  protocolVersion: string | undefined;
  listTools(): Promise<{ name: string; description?: string; inputSchema: Record<string, unknown> }[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<McpResult>;
  close(): Promise<void>;
}

export type ClientLine = 'v1' | 'v2';
export const LINES: readonly ClientLine[] = ['v1', 'v2'];

/** One tool call over MCP with `key`: a client of `line` (v2 unless told) connected, the call, closed. */
export async function callMcpTool(
  baseUrl: string,
  key: string,
  name: string,
  args: Record<string, unknown> = {},
  line: ClientLine = 'v2',
): Promise<McpResult> {
  const client = await connect(line, baseUrl, key);
  try {
    return await client.callTool(name, args);
  } finally {
    await client.close();
  }
}

export async function connect(line: ClientLine, baseUrl: string, key: string): Promise<McpClient> {
  const url = new URL(`${baseUrl}/mcp`);
  const requestInit = { headers: { Authorization: bearer(key) } };
  if (line === 'v1') {
    const client = new V1Client({ name: 'toolgate-test-v1', version: '1.0.0' });
    const transport = new V1Transport(url, { requestInit });
    await client.connect(transport);
    return {
      line,
      protocolVersion: transport.protocolVersion,
      listTools: async () => (await client.listTools()).tools as never,
      callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as McpResult,
      close: () => client.close(),
    };
  }
  const client = new V2Client(
    { name: 'toolgate-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(new V2Transport(url, { requestInit }));
  return {
    line,
    protocolVersion: client.getNegotiatedProtocolVersion(),
    listTools: async () => (await client.listTools()).tools as never,
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as McpResult,
    close: () => client.close(),
  };
}
