/**
 * @module The HTTP door of the tools: `POST /api/v1/tools/<tool>`, one route per registered tool
 * (for its OpenAPI entry), and one route for the catalogue's tools (which come and go without a
 * restart). Authentication on request; then the tool call (tools/call.ts), which admits, runs,
 * counts and measures it, and whose answer or refusal this door only writes out.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError, errorStatus } from '../../domain/api-error.js';
import type { Services } from '../../service/index.js';
import type { Called, ToolCalls } from '../../tools/call.js';
import { responseSchema } from '../../tools/pipeline.js';
import { ErrorBodySchema } from '../../tools/schemas.js';
import type { Tool } from '../../tools/tool.js';
import { sendError } from '../errors.js';
import { callerOf, keyAuthentication } from '../key-auth.js';
import type { RateLimits } from '../rate-limit.js';

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** What the handler gives Fastify to send: an answer already serialised goes out as it is. */
function answer(reply: FastifyReply, called: Called): unknown {
  if (!called.ok) return sendError(reply, called.error);
  if (called.status !== 200) reply.code(called.status);
  if (called.json === undefined) return called.body;
  reply.type('application/json; charset=utf-8');
  return called.json;
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

// The arguments are checked by the tool call, the same check for both doors; the routes keep the
// schema for the OpenAPI document only.
const UNCHECKED = () => () => true;

export async function toolRoutes(
  app: FastifyInstance,
  opts: { services: Services; tools: readonly Tool[]; calls: ToolCalls; limits?: RateLimits },
) {
  const { services, tools, calls } = opts;
  const metrics = services.metrics;
  const authenticate = keyAuthentication(services, opts.limits, { deferRateLimit: true });
  const onRequest = metrics
    ? (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
        request.startedAt = performance.now();
        authenticate(request, reply, done);
      }
    : authenticate;

  const serve = (name: string, request: FastifyRequest, reply: FastifyReply): unknown => {
    const called = calls.call('http', callerOf(request), name, request.body);
    return called instanceof Promise ? called.then((c) => answer(reply, c)) : answer(reply, called);
  };

  // What the door itself refused, before any tool call (no valid key, a body that is not JSON, a
  // media type it does not take): counted and measured as the tool call's failures are. The tool
  // call's own refusals are written out by the handler, never thrown, so they do not pass here.
  app.addHook('onError', (request, _reply, error, done) => {
    const named = request.routeOptions.config.tool ?? (request.params as { tool?: string }).tool;
    // The method refusal of /api/v1/tools/* names no tool: not a tool call.
    if (named !== undefined) {
      const auth = request.auth;
      const caller = auth
        ? { accountId: auth.accountId, keyId: auth.keyId, startedAt: request.startedAt }
        : undefined;
      calls.refusedAtDoor('http', named, errorStatus(error), caller);
    }
    done();
  });

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
      validatorCompiler: UNCHECKED,
      config: { tool: tool.name },
      onRequest,
      handler: (request, reply) => serve(tool.name, request, reply),
    });
  }

  // The catalogue's tools, and every unknown name. Authenticated like any tool call: without a valid
  // key nothing is learnt about which tools exist.
  // No params schema: a path parameter is always a string, and its check would run on every call.
  app.post<{ Params: { tool: string } }>(
    '/api/v1/tools/:tool',
    { schema: { hide: true }, onRequest },
    (request, reply) => serve(request.params.tool, request, reply),
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
