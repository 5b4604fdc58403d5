/**
 * @module The tools surface: `POST /api/v1/tools/<tool>`, one route per registered tool behind one
 * pipeline: authentication on request, then argument validation, then the tool (metered tools
 * through tools/pipeline.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../service/index.js';
import { bearer } from '../auth.js';
import { ApiError } from '../errors.js';
import type { RateLimits } from '../rate-limit.js';
import { ErrorBodySchema } from '../schemas.js';
import { responseSchema, runTool } from '../tools/pipeline.js';
import { RawJson, type Tool } from '../tools/tool.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: { keyId: string; accountId: string } | null;
  }
}

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

export async function toolRoutes(
  app: FastifyInstance,
  opts: { services: Services; tools: readonly Tool[]; limits?: RateLimits },
) {
  const { services, tools, limits } = opts;
  app.decorateRequest('auth', null);

  // Authentication, then the rate limit, before the body is even read: a refused request costs little.
  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    limits?.beforeAuth(request, reply);
    const result = await services.keys.authenticate(bearer(request.headers.authorization));
    if (!result.ok) {
      limits?.authFailed(request, reply);
      throw ApiError.from(result.error);
    }
    request.auth = result.value;
    limits?.afterAuth(result.value.keyId, reply);
  };

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
      onRequest: authenticate,
      handler: async (request, reply) => {
        const auth = request.auth!;
        const out = await runTool(
          tool,
          { accountId: auth.accountId, keyId: auth.keyId, services, log: request.log },
          request.body,
        );
        if (!(out instanceof RawJson)) return out;
        // Already serialised: Fastify sends a JSON string as it is.
        reply.type('application/json; charset=utf-8');
        return out.json;
      },
    });
  }

  // Authenticated like any tool call: without a valid key nothing is learnt about which tools exist.
  app.post('/api/v1/tools/:tool', { schema: { hide: true }, onRequest: authenticate }, async (request) => {
    const name = (request.params as { tool: string }).tool;
    throw new ApiError('unknown_tool', `There is no tool "${name.slice(0, 64)}".`);
  });

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
