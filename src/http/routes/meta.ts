/**
 * @module Operational routes: a pointer for people at `/`, liveness, readiness, and the OpenAPI
 * document generated from the route schemas.
 */
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { StoreHealth } from '../../service/index.js';
import type { ServedCatalogue } from '../../tools/catalogue.js';
import { ErrorBodySchema } from '../../tools/schemas.js';
import { OpenApiDocument } from '../openapi.js';

/** What `GET /` answers: someone who opens the server's address in a browser learns where to go. */
const ROOT = {
  service: 'toolgate',
  tools:
    'POST /api/v1/tools/<tool> with Authorization: Bearer <API key>; the same tools over MCP at POST /mcp',
  openapi: '/openapi.json',
  health: '/healthz',
  docs: 'docs/api.md (the HTTP contract) and docs/operations.md (running toolgate) in the toolgate distribution',
} as const;

// The probes take no credentials (a load balancer calls them), and answer 200 or 503.
const probe = { security: [], tags: ['operations'] };

export async function metaRoutes(
  app: FastifyInstance,
  opts: { store: StoreHealth; catalogue?: ServedCatalogue; console?: boolean },
) {
  app.get(
    '/healthz',
    {
      schema: {
        ...probe,
        operationId: 'checkHealth',
        summary: 'Liveness and store reachability (503 unavailable when the store is down)',
        response: {
          200: Type.Object({ status: Type.Literal('ok'), store: Type.String() }),
          503: ErrorBodySchema,
        },
      },
    },
    async () => {
      await opts.store.ping();
      return { status: 'ok' as const, store: opts.store.backend };
    },
  );
  app.get(
    '/readyz',
    {
      schema: {
        ...probe,
        operationId: 'checkReadiness',
        summary: 'Readiness: whether the store accepts writes (503 unavailable while it refuses them)',
        response: {
          200: Type.Object({ status: Type.Literal('ready'), store: Type.String() }),
          503: ErrorBodySchema,
        },
      },
    },
    async () => {
      await opts.store.ready();
      return { status: 'ready' as const, store: opts.store.backend };
    },
  );
  // With the console on, a person opening the server's address lands on it.
  if (opts.console)
    app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  else app.get('/', { schema: { hide: true } }, async () => ROOT);
  const openapi = new OpenApiDocument(() => app.swagger() as Record<string, unknown>, opts.catalogue);
  app.get('/openapi.json', { schema: { hide: true } }, async () => openapi.current());
}
