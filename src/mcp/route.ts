/**
 * @module The MCP front door: `POST /mcp` (Streamable HTTP, stateless, JSON answers), serving the
 * same tools as /api/v1/tools through the same registry and pipeline, for the same keys, limits and
 * balances. A browser's `Origin` that is not allowed is refused first (origin.ts). The key is
 * authenticated, and its rate limit taken, before any MCP work; a missing or invalid key is an
 * HTTP 401 with `WWW-Authenticate: Bearer`. The hot messages (tool calls and lists, the handshakes)
 * are answered by fast-path.ts; the rest by the MCP SDK (sdk-engine.ts), each loaded with the
 * first message it must answer (engines.ts).
 */

import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import { sendError } from '../http/errors.js';
import { callerOf, keyAuthentication } from '../http/key-auth.js';
import type { RateLimits } from '../http/rate-limit.js';
import type { Services } from '../service/index.js';
import type { ToolCalls } from '../tools/call.js';
import { McpEngines } from './engines.js';
import { originAllowed } from './origin.js';
import { SERVER_INFO, type ServerInfo } from './results.js';

export interface McpRouteOptions {
  services: Services;
  calls: ToolCalls;
  limits?: RateLimits;
  /** false: the SDK answers every message, the hot ones included (for comparing both). */
  fastPath?: boolean;
  /** TOOLGATE_ALLOWED_ORIGINS, each as normalOrigin writes it. */
  allowedOrigins?: readonly string[];
  /** With OAuth on: the 401's challenge, naming the protected resource metadata (RFC 9728). */
  challenge?: () => string;
  /** serverInfo in every initialize and 2026-07-28 answer: the brand's (results.ts serverInfoOf). */
  serverInfo?: ServerInfo;
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;

export async function mcpRoutes(app: FastifyInstance, opts: McpRouteOptions) {
  const { services } = opts;
  const onerror = (err: Error) => app.log.warn({ err: { message: err.message } }, 'mcp request refused');
  const engines = new McpEngines(opts.calls, onerror, opts.serverInfo ?? SERVER_INFO);
  app.addHook('onClose', () => engines.close());

  const checkOrigin = originCheck(opts.allowedOrigins);
  const authenticate = keyAuthentication(services, opts.limits, {
    challenge: opts.challenge ?? 'Bearer',
    deferRateLimit: true,
  });
  const fastPath = opts.fastPath !== false;

  app.post(
    '/mcp',
    {
      schema: { hide: true },
      onRequest: services.metrics ? [stamp, checkOrigin, authenticate] : [checkOrigin, authenticate],
    },
    (request, reply) => answerPost(request, reply, opts.limits, engines, fastPath),
  );

  app.route({
    method: ['GET', 'DELETE', 'PUT', 'PATCH'],
    url: '/mcp',
    schema: { hide: true },
    onRequest: checkOrigin,
    // Stateless: no session to stream from (GET) or end (DELETE).
    handler: async () => {
      throw new ApiError('method_not_allowed', undefined, undefined, { allow: 'POST' });
    },
  });
}

/**
 * The browser origin check, before the key: a page that was not meant to reach toolgate spends
 * nothing and learns nothing. A callback hook, as the key's: no promise per request for a check that
 * waits for nothing.
 */
function originCheck(allowedOrigins: readonly string[] | undefined): Hook {
  const allowed = new Set(allowedOrigins ?? []);
  return (request, _reply, done) => {
    if (originAllowed(allowed, request.headers.origin, request.headers.host)) done();
    else done(new ApiError('origin_not_allowed'));
  };
}

/** When the request arrived, for the tool call's latency metric. */
const stamp: Hook = (request, _reply, done) => {
  request.startedAt = performance.now();
  done();
};

/** One MCP POST, its key authenticated: the fast path answers a hot message, the SDK the rest. */
async function answerPost(
  request: FastifyRequest,
  reply: FastifyReply,
  limits: RateLimits | undefined,
  engines: McpEngines,
  fastPath: boolean,
): Promise<FastifyReply> {
  // MCP messages are JSON: a POST without a media type (and so without a body) is refused as any
  // other media type is.
  if (request.headers['content-type'] === undefined) throw new ApiError('unsupported_media_type');
  const body = request.body;
  // A batch (2025-03-26) spends one request of the key's budget per message, as separate requests would.
  if (Array.isArray(body) && body.length > 1 && !request.refusal) {
    request.refusal = (await limits?.takeMore(request.auth!.keyId, body.length - 1)) ?? null;
  }
  // Only a single tool call answers a rate-limit refusal in-band; anything else is refused as HTTP.
  if (request.refusal && !isToolCall(body)) return sendError(reply, request.refusal);
  // The in-band refusal keeps the HTTP one's advice on when to come back.
  if (request.refusal?.headers) reply.headers(request.refusal.headers);
  const caller = callerOf(request);
  const hot = fastPath
    ? (engines.fast ?? (await engines.loadFast())).answer(body, request.headers, caller)
    : undefined;
  if (hot) {
    const answer = hot instanceof Promise ? await hot : hot;
    if (answer.json === '') return reply.code(answer.status).send();
    return reply.code(answer.status).header('content-type', 'application/json').send(answer.json);
  }
  const response = await (await engines.sdk()).handle(toWebRequest(request), body, caller);
  return sendWebResponse(reply, response);
}

const isToolCall = (body: unknown) =>
  typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'tools/call';

/** Who calls, for the tool pipeline: the key's account, the request, and any deferred refusal. */
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
