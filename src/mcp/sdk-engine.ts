/**
 * @module The MCP messages the hot path (fast-path.ts) leaves to the official MCP TypeScript SDK (v2,
 * `@modelcontextprotocol/server`): every other method, batches, notifications, and every refusal
 * of a malformed message or header, with `tools/list` and `tools/call` answered from the same
 * registry and tool call as /api/v1/tools. The route loads this module with the first such message,
 * so a server whose callers never need it does not build it.
 *
 * Both protocol eras are served from one server factory: the 2026-07-28 revision by the SDK's
 * per-request handler, and the 2025 revisions (the `initialize` handshake of v1 clients) by a
 * stateless transport made for each request.
 */
import {
  createMcpHandler,
  isLegacyRequest,
  type McpRequestContext,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Caller, ToolCalls } from '../tools/call.js';
import { type ServerInfo, toolCallAnswer } from './results.js';

export interface McpEngine {
  /** The answer to one MCP HTTP request, its body already parsed, from an authenticated caller. */
  handle(request: Request, body: unknown, caller: Caller): Promise<Response>;
  close(): Promise<void>;
}

export function createMcpEngine(opts: {
  calls: ToolCalls;
  /** Told of a message the SDK refused (malformed JSON-RPC and the like). */
  onerror: (err: Error) => void;
  serverInfo: ServerInfo;
}): McpEngine {
  const { calls } = opts;

  const factory = (ctx: McpRequestContext): Server => {
    const caller = ctx.authInfo?.extra?.caller as Caller;
    // The low-level Server: tools are listed and called by name from the registry (JSON Schemas a
    // catalogue change can replace at any time), not registered one by one per request.
    const server = new Server(opts.serverInfo, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler('tools/list', () => ({ tools: calls.registry.list() }));
    server.setRequestHandler('tools/call', async (request) => {
      const { name } = request.params;
      const answer = toolCallAnswer(
        await calls.call('mcp', caller, name, request.params.arguments ?? {}),
        caller.requestId,
      );
      if ('error' in answer) throw new ProtocolError(ProtocolErrorCode.InvalidParams, answer.error.message);
      return answer.result();
    });
    return server;
  };

  const modern = createMcpHandler(factory, { legacy: 'reject', onerror: opts.onerror });

  /** The 2025 revisions: a server and a stateless, JSON-answering transport for this one request. */
  async function legacy(request: Request, parsedBody: unknown, ctx: McpRequestContext): Promise<Response> {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    const server = factory(ctx);
    await server.connect(transport);
    // Not closed afterwards: both hold nothing once the answer is made (no session, no stream, no
    // timer) and go with this request, while closing them builds a "connection closed" error (a
    // stack trace) per request for requests that are no longer pending.
    return transport.handleRequest(request, {
      parsedBody,
      ...(ctx.authInfo ? { authInfo: ctx.authInfo } : {}),
    });
  }

  return {
    async handle(request, body, caller) {
      const authInfo = { token: 'api-key', clientId: caller.keyId, scopes: [], extra: { caller } };
      return (await isLegacyRequest(request, body))
        ? legacy(request, body, { era: 'legacy', authInfo, requestInfo: request })
        : modern.fetch(request, { parsedBody: body, authInfo });
    },
    async close() {
      await modern.close();
    },
  };
}
