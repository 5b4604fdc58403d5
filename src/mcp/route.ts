/**
 * @module The MCP front door: `POST /mcp` (Streamable HTTP, stateless, JSON answers), serving the
 * same tools as /api/v1/tools through the same registry and pipeline, for the same keys, limits and
 * balances. A browser's `Origin` that is not allowed is refused first (origin.ts). The key is
 * authenticated, and its rate limit taken, before any MCP work; a missing or invalid key is an
 * HTTP 401 with `WWW-Authenticate: Bearer`. The hot messages (tool calls and lists, the handshakes)
 * are answered by fast-path.ts; the rest by the MCP SDK (sdk-engine.ts), loaded with the first such
 * message: a server whose callers only make hot calls does not hold it (some 20-25 MiB of memory,
 * and old-generation heap its collector would mark again and again).
 */

import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import { sendError } from '../http/errors.js';
import { keyAuthentication } from '../http/key-auth.js';
import type { RateLimits } from '../http/rate-limit.js';
import type { Services } from '../service/index.js';
import type { Caller, ToolCalls } from '../tools/call.js';
import type { FastPath } from './fast-path.js';
import { originAllowed } from './origin.js';
import type { McpEngine } from './sdk-engine.js';

export async function mcpRoutes(
  app: FastifyInstance,
  opts: {
    services: Services;
    calls: ToolCalls;
    limits?: RateLimits;
    /** false: the SDK answers every message, the hot ones included (for comparing both). */
    fastPath?: boolean;
    /** TOOLGATE_ALLOWED_ORIGINS, each as normalOrigin writes it. */
    allowedOrigins?: readonly string[];
    /** With OAuth on: the 401's challenge, naming the protected resource metadata (RFC 9728). */
    challenge?: () => string;
  },
) {
  const { services, calls } = opts;
  // Loaded with the first MCP request: a server whose callers never use MCP does not hold it.
  let fast: FastPath | undefined;
  const fastOf = async () => {
    fast ??= new (await import('./fast-path.js')).FastPath(calls);
    return fast;
  };
  const onerror = (err: Error) => app.log.warn({ err: { message: err.message } }, 'mcp request refused');
  let engine: Promise<McpEngine> | undefined;
  const engineOf = () => {
    engine ??= import('./sdk-engine.js').then(
      (m) => m.createMcpEngine({ calls, onerror }),
      (err) => {
        // Tried again by the next MCP request rather than kept as this one's failure.
        engine = undefined;
        throw err;
      },
    );
    return engine;
  };
  app.addHook('onClose', async () => {
    // An engine that failed to load has nothing to close (its request was answered with the failure).
    if (engine)
      await engine.then(
        (e) => e.close(),
        () => undefined,
      );
  });

  const allowed = new Set(opts.allowedOrigins ?? []);
  // Before the key: a page that was not meant to reach toolgate spends nothing and learns nothing.
  // A callback hook, as the key's: no promise per request for a check that waits for nothing.
  const checkOrigin = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (originAllowed(allowed, request.headers.origin, request.headers.host)) done();
    else done(new ApiError('origin_not_allowed'));
  };
  // When the request arrived, for the tool call's latency metric.
  const stamp = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    request.startedAt = performance.now();
    done();
  };
  const authenticate = keyAuthentication(services, opts.limits, {
    challenge: opts.challenge ?? 'Bearer',
    deferRateLimit: true,
  });

  app.post(
    '/mcp',
    {
      schema: { hide: true },
      onRequest: services.metrics ? [stamp, checkOrigin, authenticate] : [checkOrigin, authenticate],
    },
    async (request, reply) => {
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
        startedAt: request.startedAt,
        refusal: request.refusal,
      };
      const hot =
        opts.fastPath === false
          ? undefined
          : (fast ?? (await fastOf())).answer(body, request.headers, caller);
      if (hot) {
        const answer = hot instanceof Promise ? await hot : hot;
        if (answer.json === '') return reply.code(answer.status).send();
        return reply.code(answer.status).header('content-type', 'application/json').send(answer.json);
      }
      const response = await (await engineOf()).handle(toWebRequest(request), body, caller);
      return sendWebResponse(reply, response);
    },
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
