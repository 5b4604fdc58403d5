/**
 * @module The tools surface: `POST /api/v1/tools/<tool>`, one route per registered tool, and one
 * route for the catalogue's tools (which come and go without a restart), behind one pipeline:
 * authentication on request, then argument validation, then the tool (data tools through
 * tools/pipeline.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Services } from '../../service/index.js';
import { ApiError } from '../errors.js';
import { keyAuthentication } from '../key-auth.js';
import type { RateLimits } from '../rate-limit.js';
import { ErrorBodySchema } from '../schemas.js';
import { responseSchema, runTool } from '../tools/pipeline.js';
import { ToolRegistry } from '../tools/registry.js';
import { RawJson, type Tool, type ToolContext, WithStatus } from '../tools/tool.js';

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** What the handler gives Fastify to send: an answer already serialised goes out as it is. */
function answer(reply: FastifyReply, out: unknown): unknown {
  if (out instanceof WithStatus) {
    reply.code(out.statusCode);
    out = out.body;
  }
  if (!(out instanceof RawJson)) return out;
  reply.type('application/json; charset=utf-8');
  return out.json;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** When the tool call arrived (performance.now()), for its latency metric; 0 without metrics. */
    startedAt: number;
  }
  interface FastifyContextConfig {
    /** The registered tool a route serves (the catalogue's route has none: its tool is in the path). */
    tool?: string;
  }
}

/** The name a call is counted under in the usage history: a tool this server has, or `(unknown)`. */
export const UNKNOWN_TOOL = '(unknown)';

export async function toolRoutes(
  app: FastifyInstance,
  opts: { services: Services; tools: readonly Tool[]; registry: ToolRegistry; limits?: RateLimits },
) {
  const { services, tools, registry, limits } = opts;
  const counters = services.deps.usageCounters;
  const tokenCosts = () => registry.tokenCosts();

  const authenticate = keyAuthentication(services, limits);

  const context = (request: FastifyRequest): ToolContext => {
    const auth = request.auth!;
    return {
      accountId: auth.accountId,
      keyId: auth.keyId,
      requestId: request.id,
      services,
      log: request.log,
      tokenCosts,
    };
  };

  /** A call answered: counted with what it came to (an account tool's: no records, no tokens). */
  const answered = (ctx: ToolContext, tool: string) =>
    counters?.answered(ctx.accountId, ctx.keyId, tool, 'http', ctx.outcome);

  /**
   * Runs an admitted tool and answers: at once when the tool has its answer at once, else through
   * one promise (no async function per call on the hot path).
   */
  const serve = (tool: Tool, request: FastifyRequest, reply: FastifyReply): unknown => {
    const ctx = context(request);
    const out = runTool(tool, ctx, request.body);
    if (out instanceof Promise) {
      return out.then((o) => {
        answered(ctx, tool.name);
        return answer(reply, o);
      });
    }
    answered(ctx, tool.name);
    return answer(reply, out);
  };

  // Every authenticated call refused or failed, whatever refused it (rate limit, arguments, status,
  // fair use, tokens, the upstream): counted as failed. Only errors pass here, never an answer.
  if (counters) {
    app.addHook('onError', (request, _reply, _error, done) => {
      const auth = request.auth;
      if (auth) {
        const named = request.routeOptions.config.tool ?? (request.params as { tool?: string }).tool;
        const tool = named !== undefined && registry.find(named) ? named : UNKNOWN_TOOL;
        counters.count(auth.accountId, auth.keyId, tool, 'http', { kind: 'failed' });
      }
      done();
    });
  }

  // Every answer of a tool call, refusals included, under the tool's name if it is one (else
  // `unknown`: a caller cannot make new series by inventing names). Timed from its onRequest to its
  // onSend, route by route: an onResponse hook would make Fastify time every response itself, with
  // two listeners on each (several microseconds a request, docs/performance.md).
  const metrics = services.deps.metrics;
  const measured = (toolOf: (request: FastifyRequest) => string) =>
    metrics
      ? {
          onRequest: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
            request.startedAt = performance.now();
            authenticate(request, reply, done);
          },
          onSend: (
            request: FastifyRequest,
            reply: FastifyReply,
            payload: unknown,
            done: (e: null, p: unknown) => void,
          ) => {
            metrics.request(
              toolOf(request),
              'http',
              reply.statusCode,
              (performance.now() - request.startedAt) / 1000,
            );
            done(null, payload);
          },
        }
      : { onRequest: authenticate };

  for (const tool of tools) {
    if (!TOOL_NAME.test(tool.name)) throw new Error(`Tool name "${tool.name}" is not snake_case.`);
    app.route({
      method: 'POST',
      url: `/api/v1/tools/${tool.name}`,
      schema: {
        operationId: tool.name,
        summary: tool.summary,
        description: tool.description,
        tags: ['tools'],
        security: [{ bearerAuth: [] }],
        body: tool.args,
        response: { 200: responseSchema(tool), '4xx': ErrorBodySchema, '5xx': ErrorBodySchema },
      },
      config: { tool: tool.name },
      ...measured(() => tool.name),
      handler: (request, reply) => serve(tool, request, reply),
    });
  }

  // The catalogue's tools, and every unknown name. Authenticated like any tool call: without a valid
  // key nothing is learnt about which tools exist.
  // No params schema: a path parameter is always a string, and its check would run on every call.
  app.post<{ Params: { tool: string } }>(
    '/api/v1/tools/:tool',
    {
      schema: { hide: true },
      ...measured((request) => {
        const named = (request.params as { tool: string }).tool;
        return registry.find(named) ? named : 'unknown';
      }),
    },
    (request, reply) => {
      const served = registry.find(request.params.tool);
      if (!served) {
        throw new ApiError('unknown_tool', `There is no tool "${request.params.tool.slice(0, 64)}".`);
      }
      ToolRegistry.admit(served, request.body);
      return serve(served.tool, request, reply);
    },
  );

  app.route({
    method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: '/api/v1/tools/*',
    exposeHeadRoute: false,
    schema: { hide: true },
    handler: async () => {
      throw new ApiError('method_not_allowed', undefined, undefined, { allow: 'POST' });
    },
  });
}
