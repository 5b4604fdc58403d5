/**
 * @module The tools surface: `POST /api/v1/tools/<tool>`, one route per registered tool, and one
 * route for the catalogue's tools (which come and go without a restart), behind one pipeline:
 * authentication on request, then argument validation, then the tool (data tools through
 * tools/pipeline.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import type { Services } from '../../service/index.js';
import { ApiError } from '../errors.js';
import { keyAuthentication } from '../key-auth.js';
import type { RateLimits } from '../rate-limit.js';
import { ErrorBodySchema } from '../schemas.js';
import type { ServedTool } from '../tools/catalogue-tool.js';
import { responseSchema, runTool } from '../tools/pipeline.js';
import { ToolRegistry } from '../tools/registry.js';
import { RawJson, type Tool, type ToolContext, WithStatus } from '../tools/tool.js';

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** What the handler gives Fastify to send: an answer already serialised goes out as it is. */
function answer(reply: FastifyReply, out: unknown): unknown {
  if (out instanceof WithStatus) {
    reply.code(out.statusCode);
    return out.body;
  }
  if (!(out instanceof RawJson)) return out;
  reply.type('application/json; charset=utf-8');
  return out.json;
}

/** The catalogue's tools as this server serves them (service/live-catalogue.ts). */
export interface CatalogueTools {
  get(name: string): ServedTool | undefined;
}

export async function toolRoutes(
  app: FastifyInstance,
  opts: { services: Services; tools: readonly Tool[]; catalogue?: CatalogueTools; limits?: RateLimits },
) {
  const { services, tools, catalogue, limits } = opts;

  const authenticate = keyAuthentication(services, limits);

  const context = (request: FastifyRequest): ToolContext => {
    const auth = request.auth!;
    return {
      accountId: auth.accountId,
      keyId: auth.keyId,
      requestId: request.id,
      services,
      log: request.log,
    };
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
      handler: (request, reply) => {
        const out = runTool(tool, context(request), request.body);
        return out instanceof Promise ? out.then((o) => answer(reply, o)) : answer(reply, out);
      },
    });
  }

  // The catalogue's tools, and every unknown name. Authenticated like any tool call: without a valid
  // key nothing is learnt about which tools exist.
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .post(
      '/api/v1/tools/:tool',
      { schema: { hide: true, params: Type.Object({ tool: Type.String() }) }, onRequest: authenticate },
      async (request, reply) => {
        const served = catalogue?.get(request.params.tool);
        if (!served) {
          throw new ApiError('unknown_tool', `There is no tool "${request.params.tool.slice(0, 64)}".`);
        }
        ToolRegistry.admit(served, request.body);
        return answer(reply, await runTool(served.tool, context(request), request.body));
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
