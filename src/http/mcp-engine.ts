/**
 * @module What serves MCP messages once the front door (routes/mcp.ts) has authenticated the key:
 * the official MCP TypeScript SDK (v2, `@modelcontextprotocol/server`), answering `tools/list` and
 * `tools/call` from the same registry and pipeline as /api/v1/tools. The route loads this module
 * with the first MCP request, so a server whose callers never use MCP does not hold the SDK.
 *
 * Both protocol eras are served from one server factory: the 2026-07-28 revision by the SDK's
 * per-request handler, and the 2025 revisions (the `initialize` handshake of v1 clients) by a
 * stateless transport made for each request.
 */
import {
  type CallToolResult,
  createMcpHandler,
  isLegacyRequest,
  type McpRequestContext,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import { ERROR_STATUS, type ErrorCode } from '../domain/errors.js';
import type { Services } from '../service/index.js';
import { ApiError, errorBody } from './errors.js';
import { UNKNOWN_TOOL } from './routes/tools.js';
import type { ToolRegistry } from './tools/registry.js';
import type { ToolContext } from './tools/tool.js';

const SERVER_INFO = { name: 'toolgate', version: '1' };

/** What the factory needs of the HTTP request it serves; passed through the SDK as `authInfo.extra`. */
export interface Caller {
  accountId: string;
  keyId: string;
  requestId: string;
  log: FastifyBaseLogger;
  /** A rate-limit refusal: a tools/call answers it as an error result. */
  refusal: ApiError | null;
}

export interface McpEngine {
  /** The answer to one MCP HTTP request, its body already parsed, from an authenticated caller. */
  handle(request: Request, body: unknown, caller: Caller): Promise<Response>;
  close(): Promise<void>;
}

/** A tool result whose `structuredContent` is exactly the HTTP answer's body, and its text that body's JSON. */
const toolResult = (body: unknown, isError: boolean, json = JSON.stringify(body)): CallToolResult => ({
  content: [{ type: 'text', text: json }],
  structuredContent: body as Record<string, unknown>,
  ...(isError ? { isError: true } : {}),
});

function errorResult(err: ApiError, requestId: string): CallToolResult {
  return toolResult(errorBody(err.code, err.message, requestId, err.details), true);
}

export function createMcpEngine(opts: {
  services: Services;
  registry: ToolRegistry;
  /** Told of a message the SDK refused (malformed JSON-RPC and the like). */
  onerror: (err: Error) => void;
}): McpEngine {
  const { services, registry } = opts;
  const counters = services.deps.usageCounters;
  const metrics = services.deps.metrics;
  const tokenCosts = () => registry.tokenCosts();

  const factory = (ctx: McpRequestContext): Server => {
    const caller = ctx.authInfo?.extra?.caller as Caller;
    // The low-level Server: tools are listed and called by name from the registry (JSON Schemas a
    // catalogue change can replace at any time), not registered one by one per request.
    const server = new Server(SERVER_INFO, { capabilities: { tools: { listChanged: false } } });
    server.setRequestHandler('tools/list', () => ({ tools: registry.list() }));
    server.setRequestHandler('tools/call', async (request) => {
      const started = performance.now();
      const { name } = request.params;
      // The status an HTTP call would have had: 200, the refusal's, or 404 for no such tool.
      let status = 404;
      try {
        const result = await callTool(name, request.params.arguments);
        const code = (result.structuredContent as { code?: ErrorCode } | undefined)?.code;
        status = result.isError && code ? ERROR_STATUS[code] : 200;
        return result;
      } finally {
        metrics?.request(
          registry.find(name) ? name : 'unknown',
          'mcp',
          status,
          (performance.now() - started) / 1000,
        );
      }
    });
    const callTool = async (name: string, args: Record<string, unknown> | undefined) => {
      const callable = registry.find(name);
      const counted = callable ? name : UNKNOWN_TOOL;
      const failed = () =>
        counters?.count(caller.accountId, caller.keyId, counted, 'mcp', { kind: 'failed' });
      // The rate limit first, as over HTTP: a refused call learns nothing, not even whether the tool exists.
      if (caller.refusal) {
        failed();
        return errorResult(caller.refusal, caller.requestId);
      }
      if (!callable) {
        failed();
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `There is no tool "${name.slice(0, 64)}".`);
      }
      const tool: ToolContext = {
        accountId: caller.accountId,
        keyId: caller.keyId,
        requestId: caller.requestId,
        services,
        log: caller.log,
        tokenCosts,
      };
      try {
        const answered = await registry.call(callable, tool, args ?? {});
        counters?.answered(caller.accountId, caller.keyId, name, 'mcp', tool.outcome);
        return toolResult(answered.body, false, answered.json);
      } catch (err) {
        failed();
        if (err instanceof ApiError) return errorResult(err, caller.requestId);
        // Unexpected: logged like any route's, answered as the HTTP route would (500, nothing internal).
        caller.log.error({ err }, 'unhandled error');
        return errorResult(new ApiError('internal_error'), caller.requestId);
      }
    };
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
