/**
 * @module The MCP front door: `POST /mcp` (Streamable HTTP, stateless, JSON answers) on the official
 * MCP TypeScript SDK (v2, `@modelcontextprotocol/server`), serving the same tools as
 * /api/v1/tools through the same registry and pipeline, for the same keys, limits and balances.
 *
 * Both protocol eras are served from one server factory: the 2026-07-28 revision by the SDK's
 * per-request handler, and the 2025 revisions (the `initialize` handshake of v1 clients) by a
 * stateless transport made for each request. The key is authenticated, and its rate limit taken,
 * before any MCP work; a missing or invalid key is an HTTP 401 with `WWW-Authenticate: Bearer`.
 */

import { Readable } from 'node:stream';
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
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_STATUS, type ErrorCode } from '../../domain/errors.js';
import type { Services } from '../../service/index.js';
import { ApiError, errorBody, sendError } from '../errors.js';
import { keyAuthentication } from '../key-auth.js';
import type { RateLimits } from '../rate-limit.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { ToolContext } from '../tools/tool.js';
import { UNKNOWN_TOOL } from './tools.js';

const SERVER_INFO = { name: 'toolgate', version: '1' };

/** What the factory needs of the HTTP request it serves; passed through the SDK as `authInfo.extra`. */
interface Caller {
  accountId: string;
  keyId: string;
  requestId: string;
  log: FastifyBaseLogger;
  /** A rate-limit refusal: a tools/call answers it as an error result. */
  refusal: ApiError | null;
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

export async function mcpRoutes(
  app: FastifyInstance,
  opts: { services: Services; registry: ToolRegistry; limits?: RateLimits },
) {
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

  const onerror = (err: Error) => app.log.warn({ err: { message: err.message } }, 'mcp request refused');
  const modern = createMcpHandler(factory, { legacy: 'reject', onerror });
  app.addHook('onClose', () => modern.close());

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

  const authenticate = keyAuthentication(services, opts.limits, {
    challenge: 'Bearer',
    deferRateLimit: true,
  });

  app.post('/mcp', { schema: { hide: true }, onRequest: authenticate }, async (request, reply) => {
    // MCP messages are JSON: a POST without a media type (and so without a body) is refused as any
    // other media type is.
    if (request.headers['content-type'] === undefined) throw new ApiError('unsupported_media_type');
    const body = request.body;
    // A batch (2025-03-26) spends one request of the key's budget per message, as separate requests would.
    if (Array.isArray(body) && body.length > 1 && !request.refusal) {
      request.refusal = (await opts.limits?.takeMore(request.auth!.keyId, body.length - 1)) ?? null;
    }
    const isCall =
      typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'tools/call';
    // Only a single tool call answers a rate-limit refusal in-band; anything else is refused as HTTP.
    if (request.refusal && !isCall) return sendError(reply, request.refusal);
    // The in-band refusal keeps the HTTP one's advice on when to come back.
    if (request.refusal?.headers) reply.headers(request.refusal.headers);
    const auth = request.auth!;
    const caller: Caller = {
      accountId: auth.accountId,
      keyId: auth.keyId,
      requestId: request.id,
      log: request.log,
      refusal: request.refusal,
    };
    const authInfo = { token: 'api-key', clientId: auth.keyId, scopes: [], extra: { caller } };
    const web = toWebRequest(request);
    const response = (await isLegacyRequest(web, body))
      ? await legacy(web, body, { era: 'legacy', authInfo, requestInfo: web })
      : await modern.fetch(web, { parsedBody: body, authInfo });
    return sendWebResponse(reply, response);
  });

  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: '/mcp',
    schema: { hide: true },
    // Stateless: no session to stream from (GET) or end (DELETE).
    handler: async () => {
      throw new ApiError('method_not_allowed', undefined, undefined, { allow: 'POST' });
    },
  });
}

/** The Fastify request as the SDK takes it: a web Request with its headers; the body goes parsed. */
function toWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  // The body was parsed as JSON already (a media type toolgate took for JSON): the SDK is told so
  // plainly, rather than judging the caller's header again by rules of its own.
  headers.set('content-type', 'application/json');
  // Nothing here routes by host or query: a fixed URL, whatever Host the caller sent.
  return new Request('http://toolgate.local/mcp', { method: request.method, headers });
}

async function sendWebResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    reply.header(name, value);
  });
  if (!response.body) return reply.send();
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return reply.send(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream));
  }
  return reply.send(await response.text());
}
