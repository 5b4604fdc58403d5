/**
 * @module buildApp(deps): the HTTP application, with no listening socket. The composition root
 * (main.ts) and the tests build it the same way.
 */
import { createServer } from 'node:http';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { AdminToken } from './config.js';
import {
  type ConsoleIdentity,
  type ConsoleSettings,
  type CookieIdentity,
  registerConsole,
} from './console/index.js';
import type { ConnectedApps } from './console/ports.js';
import { ApiError } from './domain/api-error.js';
import { type Brand, DEFAULT_BRAND } from './domain/brand.js';
import { newId } from './domain/ids.js';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js';
import { jsonDepth, MAX_JSON_DEPTH } from './http/json-depth.js';
import { OpenApiDocument } from './http/openapi.js';
import { type RateLimitOptions, RateLimits } from './http/rate-limit.js';
import { lazyChildLogger, withRequestSerializer } from './http/request-logger.js';
import { adminRoutes } from './http/routes/admin.js';
import { metaRoutes } from './http/routes/meta.js';
import { stripeWebhookRoutes } from './http/routes/stripe-webhook.js';
import { toolRoutes } from './http/routes/tools.js';
import { serverInfoOf } from './mcp/results.js';
import { mcpRoutes } from './mcp/route.js';
import { oauthConsent } from './oauth/consent.js';
import { oauthRoutes } from './oauth/routes.js';
import type { OAuthServer } from './oauth/server.js';
import type { ConsoleServiceOptions } from './service/console.js';
import type { Services } from './service/index.js';
import { billingUrl } from './service/payments.js';
import { ToolCalls } from './tools/call.js';
import type { ServedCatalogue } from './tools/catalogue.js';
import { TOOLS } from './tools/index.js';
import { ToolRegistry } from './tools/registry.js';
import { ErrorBodySchema } from './tools/schemas.js';
import type { Tool } from './tools/tool.js';

export interface AppDeps {
  services: Services;
  /** Who may use the admin API (none: it is off). */
  adminTokens?: readonly AdminToken[];
  /** Shorthand for one admin token named "admin"; null: the admin API is off. */
  adminToken?: string | null;
  /** A pino logger; none for silence. */
  logger?: Logger;
  /** The tools to serve; the registered list by default (tests add their own). */
  tools?: readonly Tool[];
  /** The catalogue's tools, served beside them (none: only the registered tools). */
  catalogue?: ServedCatalogue;
  /** Largest request body accepted, in bytes. */
  bodyLimit?: number;
  /** Rate limits on the tools API; none when not given (tests that are not about them). */
  rateLimits?: RateLimitOptions;
  /** Limits on slow clients. */
  timeouts?: Partial<Timeouts>;
  /** Whom to believe about the client's address (X-Forwarded-For): Fastify's trustProxy. */
  trustProxy?: boolean | string[];
  /** Browser origins besides the server's own that may call /mcp (TOOLGATE_ALLOWED_ORIGINS, normalised). */
  allowedOrigins?: readonly string[];
  /** false: the MCP SDK answers every message, the hot ones included (tests compare both). */
  mcpFastPath?: boolean;
  /** The customers' console at /console (TOOLGATE_CONSOLE); none: off. */
  console?: ConsoleSettings;
  /** The OAuth grants the console's "Connected apps" lists; none: it lists none. */
  connectedApps?: ConnectedApps;
  /** The OAuth authorization server for /mcp (src/oauth); none: /mcp takes API keys only. Its consent page is the console's. */
  oauth?: OAuthServer;
  /** Who is signed in to the console, when not its own sessions (a test's stand-in). */
  consoleIdentity?: ConsoleIdentity;
  /** What customers and agents see instead of toolgate (TOOLGATE_BRAND_*); toolgate's own by default. */
  brand?: Brand;
}

export const DEFAULT_BODY_LIMIT = 64 * 1024;

export interface Timeouts {
  /** A client must send its complete request headers within this (408 otherwise). */
  headersMs: number;
  /** ... and its complete request, body included, within this. */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 72_000 };

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = createFastify(deps);
  installErrorHandling(app, deps.services.metrics);
  app.addSchema(ErrorBodySchema);
  await registerOpenApi(app);
  await registerDoors(app, deps);
  return app;
}

/** The Fastify instance every door is registered on: its server, logging, ids and JSON body parsing. */
function createFastify(deps: AppDeps): FastifyInstance {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...deps.timeouts };
  // Fastify given a logger times every response and listens for its end, for the `request
  // completed` line, even when `info` is off, a measurable share of get_account's throughput
  // (docs/performance.md). So it gets the logger only when it logs requests; otherwise each
  // request's logger is attached by the first hook below (warnings and errors keep their
  // request_id), and Fastify's own is silent.
  const logger = deps.logger && withRequestSerializer(deps.logger);
  const requestLogging = logger?.isLevelEnabled('info') ?? false;
  const quietLogger = logger && !requestLogging ? logger : undefined;
  const app = Fastify({
    // Node checks these timeouts every connectionsCheckingInterval; check often enough for them to mean something.
    serverFactory: (handler) => {
      const server = createServer(
        {
          headersTimeout: timeouts.headersMs,
          requestTimeout: timeouts.requestMs,
          connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
          // Node would answer a missing Host header with a bare 400 of its own; nothing here routes
          // by host, so such a request goes through the pipeline and gets a JSON answer like any other.
          requireHostHeader: false,
        },
        handler,
      );
      // Fastify's own keepAliveTimeout option does not reach a server it did not create.
      server.keepAliveTimeout = timeouts.keepAliveMs;
      // An Expect header other than 100-continue would get Node's own bare 417; a server MAY
      // refuse it (RFC 9110, 10.1.1), and toolgate instead serves the request like any other.
      server.on('checkExpectation', handler);
      return server;
    },
    requestTimeout: timeouts.requestMs,
    // While closing, requests already on their way are served, not turned away.
    return503OnClosing: false,
    ...(requestLogging
      ? { loggerInstance: logger as FastifyBaseLogger, childLoggerFactory: lazyChildLogger }
      : { logger: false }),
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

  installRequestHooks(app, quietLogger);
  installJsonBodies(app);
  return app;
}

/** Each request's id on its answer and its logger, and an absent body taken as {}. */
function installRequestHooks(app: FastifyInstance, quietLogger: Logger | undefined): void {
  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (quietLogger) {
      const log: FastifyBaseLogger = lazyChildLogger(quietLogger, { request_id: request.id }, {});
      request.log = log;
      reply.log = log;
    }
    done();
  });
  // An absent body is taken as {}, on every route that takes one.
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.body === undefined && request.method !== 'GET' && request.method !== 'HEAD')
      request.body = {};
    done();
  });
}

/** The one body parser. */
function installJsonBodies(app: FastifyInstance): void {
  // JSON bodies: `application/json` with any charset parameter; an empty body is taken as {}.
  // Every other media type (text/plain included, which Fastify parses by default) answers 415.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    // The common case first (get_account's `{}`), without a parser.
    if (text === '{}') return done(null, {});
    if (text.trim() === '') return done(null, {});
    // Refused before parsing: nothing downstream has to survive pathological nesting.
    if (jsonDepth(text) > MAX_JSON_DEPTH) {
      return done(
        new ApiError('invalid_json', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`),
        undefined,
      );
    }
    parseJson(request, text, done);
  });
}

/** The OpenAPI document's frame (/openapi.json): the routes add themselves. */
async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    // Shared schemas are components named by their $id (ErrorBody), not def-<n>.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'toolgate',
        version: '1',
        description:
          'Tools API: POST /api/v1/tools/<tool> with a bearer API key. Errors share one JSON shape.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative: the document is served by the server it describes, whatever address it is reached at.
      servers: [{ url: '/', description: 'The server serving this document' }],
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
}

/** The doors, on one tool call and one set of limits: the tools API, MCP, the console, OAuth, the admin API. */
async function registerDoors(app: FastifyInstance, deps: AppDeps): Promise<void> {
  // One set of limits for both doors: a key has one budget, whether it calls over HTTP or MCP.
  const limits = deps.rateLimits ? new RateLimits(deps.rateLimits, deps.services.metrics) : undefined;
  const tools = deps.tools ?? TOOLS;
  app.decorateRequest('auth', null);
  app.decorateRequest('refusal', null);
  app.decorateRequest('startedAt', 0);
  // Both doors call tools through one tool call, on one registry.
  const calls = new ToolCalls(new ToolRegistry(tools, deps.catalogue), deps.services);
  await app.register(toolRoutes, { services: deps.services, tools, calls, ...(limits ? { limits } : {}) });
  await app.register(mcpRoutes, {
    services: deps.services,
    calls,
    ...(limits ? { limits } : {}),
    ...(deps.allowedOrigins ? { allowedOrigins: deps.allowedOrigins } : {}),
    ...(deps.mcpFastPath === false ? { fastPath: false } : {}),
    ...(deps.oauth ? { challenge: oauthChallenge(deps.oauth) } : {}),
    serverInfo: serverInfoOf(deps.brand),
  });
  // The console in a scope of its own, the OAuth consent page among its pages.
  const settings = deps.console;
  const consoleService = settings ? deps.services.console(consoleOptions(settings)) : undefined;
  const consoleIdentity: CookieIdentity | undefined =
    settings && consoleService
      ? await registerConsole(app, {
          service: consoleService,
          uses: deps.services,
          settings,
          tokenCosts: () => calls.registry.tokenCosts(),
          brand: deps.brand ?? DEFAULT_BRAND,
          openapi: consoleOpenApi(app, deps.catalogue),
          ...(deps.logger ? { logger: deps.logger } : {}),
          ...(deps.connectedApps ? { connectedApps: deps.connectedApps } : {}),
          ...(deps.oauth ? { consent: oauthConsent(deps.oauth) } : {}),
          ...(deps.consoleIdentity ? { identity: deps.consoleIdentity } : {}),
        })
      : undefined;
  if (deps.oauth) await app.register(oauthRoutes, { oauth: deps.oauth });
  const adminTokens =
    deps.adminTokens ?? (deps.adminToken ? [{ name: 'admin', token: deps.adminToken }] : []);
  if (adminTokens.length > 0) {
    await app.register(adminRoutes, {
      prefix: '/admin/v1',
      services: deps.services,
      adminTokens,
      ...(limits ? { limits } : {}),
      ...(consoleService ? { consoleLinks: consoleService } : {}),
      billingReturn: (request, accountId) =>
        billingUrl(settings?.publicUrl() ?? `${request.protocol}://${request.host}`, accountId),
    });
  }
  // Off without a secret key: the path is then unknown (404), as any other.
  if (deps.services.payments.enabled)
    await app.register(stripeWebhookRoutes, { payments: deps.services.payments });
  await app.register(metaRoutes, {
    store: deps.services.health,
    console: consoleIdentity !== undefined,
    ...(deps.catalogue ? { catalogue: deps.catalogue } : {}),
  });
}

/** The console's use cases' options, from the operator's settings. */
function consoleOptions(settings: ConsoleSettings): ConsoleServiceOptions {
  return {
    publicUrl: settings.publicUrl,
    signup: settings.signup ?? 'closed',
    signupPlan: settings.signupPlan ?? 'free',
  };
}

/** `Bearer resource_metadata="<public url>/.well-known/oauth-protected-resource/mcp"`, for /mcp's 401. */
function oauthChallenge(oauth: OAuthServer): () => string {
  let challenge: string | undefined;
  return () => {
    challenge ??= `Bearer resource_metadata="${oauth.publicUrl}/.well-known/oauth-protected-resource/mcp"`;
    return challenge;
  };
}

/** The OpenAPI document as /openapi.json serves it, made when the console's Connect page first asks. */
function consoleOpenApi(app: FastifyInstance, catalogue: ServedCatalogue | undefined) {
  const document = new OpenApiDocument(() => app.swagger() as Record<string, unknown>, catalogue);
  return () => document.current() as Record<string, unknown>;
}
