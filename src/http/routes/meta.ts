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
  docs: 'docs/api.md (the tools API), docs/admin-api.md (the admin API) and docs/operations.md (running toolgate) in the toolgate distribution',
} as const;

// The probes take no credentials (a load balancer calls them), and answer 200 or 503.
const probe = { security: [], tags: ['operations'] };

export async function metaRoutes(
  app: FastifyInstance,
  opts: { store: StoreHealth; catalogue?: ServedCatalogue; console?: boolean },
) {
  probeRoute(app, '/healthz', {
    operationId: 'checkHealth',
    summary: 'Liveness and store reachability (503 unavailable when the store is down)',
    status: 'ok',
    check: () => opts.store.ping(),
    backend: opts.store.backend,
  });
  probeRoute(app, '/readyz', {
    operationId: 'checkReadiness',
    summary: 'Readiness: whether the store accepts writes (503 unavailable while it refuses them)',
    status: 'ready',
    check: () => opts.store.ready(),
    backend: opts.store.backend,
  });
  // With the console on, a person opening the server's address lands on it.
  if (opts.console)
    app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  else app.get('/', { schema: { hide: true } }, async () => ROOT);
  const openapi = new OpenApiDocument(() => app.swagger() as Record<string, unknown>, opts.catalogue);
  app.get('/openapi.json', { schema: { hide: true } }, async () => openapi.current());
}

/** A probe: 200 `{status, store}` once `check` passes; its failure (the store down) is the 503. */
function probeRoute(
  app: FastifyInstance,
  path: string,
  p: { operationId: string; summary: string; status: string; check: () => Promise<void>; backend: string },
): void {
  app.get(
    path,
    {
      schema: {
        ...probe,
        operationId: p.operationId,
        summary: p.summary,
        response: {
          200: Type.Object({ status: Type.Literal(p.status), store: Type.String() }),
          503: ErrorBodySchema,
        },
      },
    },
    async () => {
      await p.check();
      return { status: p.status, store: p.backend };
    },
  );
}
