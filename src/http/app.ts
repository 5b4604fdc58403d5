/**
 * @module buildApp(deps): the HTTP application, with no listening socket. The composition root
 * (main.ts) and the tests build it the same way.
 */
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { AdminToken } from '../config.js';
import { newId } from '../domain/ids.js';
import type { Services } from '../service/index.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './errors.js';
import { type RateLimitOptions, RateLimits } from './rate-limit.js';
import { adminRoutes } from './routes/admin.js';
import { metaRoutes } from './routes/meta.js';
import { toolRoutes } from './routes/tools.js';
import { ErrorBodySchema } from './schemas.js';
import { TOOLS } from './tools/index.js';
import type { Tool } from './tools/tool.js';

export interface AppDeps {
  services: Services;
  /** Who may use the admin API (none: it is off). */
  adminTokens?: readonly AdminToken[];
  /** Shorthand for one admin token named "admin"; null: the admin API is off. */
  adminToken?: string | null;
  /** A pino logger; none for silence. */
  logger?: FastifyBaseLogger;
  /** The tools to serve; the registered list by default (tests add their own). */
  tools?: readonly Tool[];
  /** Largest request body accepted, in bytes. */
  bodyLimit?: number;
  /** Rate limits on the tools API; none when not given (tests that are not about them). */
  rateLimits?: RateLimitOptions;
  /** Whom to believe about the client's address (X-Forwarded-For): Fastify's trustProxy. */
  trustProxy?: boolean | string[];
}

export const DEFAULT_BODY_LIMIT = 64 * 1024;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    genReqId: () => newId('req'),
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: deps.bodyLimit ?? DEFAULT_BODY_LIMIT,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: false } },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    frameworkErrors,
    trustProxy: deps.trustProxy ?? false,
    clientErrorHandler,
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // An absent body is taken as {}, on every route that takes one.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD')
      request.body = {};
  });

  // JSON bodies: `application/json` with any charset parameter; an empty body is taken as {}.
  // Every other media type (text/plain included, which Fastify parses by default) answers 415.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if ((body as string).trim() === '') return done(null, {});
    parseJson(request, body as string, done);
  });

  installErrorHandling(app);
  app.addSchema(ErrorBodySchema);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'toolgate',
        version: '1',
        description:
          'Tools API: POST /api/v1/tools/<tool> with a bearer API key. Errors share one JSON shape.',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key: <prefix>_<11 base62 characters>',
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'TOOLGATE_ADMIN_TOKEN' },
        },
      },
    },
  });

  await app.register(toolRoutes, {
    services: deps.services,
    tools: deps.tools ?? TOOLS,
    ...(deps.rateLimits ? { limits: new RateLimits(deps.rateLimits) } : {}),
  });
  const adminTokens =
    deps.adminTokens ?? (deps.adminToken ? [{ name: 'admin', token: deps.adminToken }] : []);
  if (adminTokens.length > 0) {
    await app.register(adminRoutes, {
      prefix: '/admin/v1',
      services: deps.services,
      adminTokens,
    });
  }
  await app.register(metaRoutes, { store: deps.services.deps.store });
  return app;
}
