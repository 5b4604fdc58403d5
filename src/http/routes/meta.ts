/** @module Operational routes: liveness, readiness, and the OpenAPI document generated from the route schemas. */
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { Store } from '../../store/store.js';
import type { ServedCatalogue } from '../../tools/catalogue.js';
import { OpenApiDocument } from '../openapi.js';

export async function metaRoutes(app: FastifyInstance, opts: { store: Store; catalogue?: ServedCatalogue }) {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness and store reachability (503 unavailable when the store is down)',
        response: { 200: Type.Object({ status: Type.Literal('ok'), store: Type.String() }) },
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
        tags: ['operations'],
        summary: 'Readiness: whether the store accepts writes (503 unavailable while it refuses them)',
        response: { 200: Type.Object({ status: Type.Literal('ready'), store: Type.String() }) },
      },
    },
    async () => {
      await opts.store.ready();
      return { status: 'ready' as const, store: opts.store.backend };
    },
  );
  const openapi = new OpenApiDocument(() => app.swagger() as Record<string, unknown>, opts.catalogue);
  app.get('/openapi.json', { schema: { hide: true } }, async () => openapi.current());
}
