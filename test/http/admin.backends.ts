/**
 * The admin API on each backend: the same app, built as the server builds it, on a scratch SQLite
 * file and on a scratch PostgreSQL schema, so that a test can run one table of cases on both and
 * compare. PostgreSQL is skipped (loudly, see test/postgres.ts) when it does not answer.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { createServices, type Services } from '../../src/service/index.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import { serveCatalogue } from '../../src/tools/catalogue.js';
import { ADMIN_TOKEN, KEY_SECRET, scratchApp, T0 } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchSchemaName } from '../postgres.js';

export interface BackendApp {
  app: FastifyInstance;
  services: Services;
  store: Store;
  close(): Promise<void>;
}

export interface MakeOptions {
  /** Serve the tool catalogue (no upstream variables allowed). */
  catalogue?: boolean;
}

export interface Backend {
  name: 'SQLite' | 'PostgreSQL';
  make(opts?: MakeOptions): Promise<BackendApp>;
}

async function postgresApp(opts: MakeOptions = {}): Promise<BackendApp> {
  const schema = scratchSchemaName();
  const { store, reads } = withReadCache(
    (observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }),
  );
  await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  const catalogue = opts.catalogue
    ? await serveCatalogue({ catalogue: store.catalogue, env: {}, upstreamEnv: [] })
    : undefined;
  const services = createServices({
    store,
    reads,
    clock: new FixedClock(T0),
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
    // As the server wires it: a change made through these services is served at once.
    ...(catalogue ? { catalogueChanged: () => catalogue.refresh() } : {}),
  });
  const app = await buildApp({ services, adminToken: ADMIN_TOKEN, ...(catalogue ? { catalogue } : {}) });
  return {
    app,
    services,
    store,
    async close() {
      await app.close();
      await catalogue?.close();
      await store.dropSchema().catch(() => {});
      await store.close();
    },
  };
}

/** SQLite always; PostgreSQL when it answers. */
export async function backends(): Promise<Backend[]> {
  const sqlite: Backend = {
    name: 'SQLite',
    make: (opts = {}) => scratchApp(opts.catalogue ? { catalogue: {} } : {}),
  };
  return (await postgresAvailable()) ? [sqlite, { name: 'PostgreSQL', make: postgresApp }] : [sqlite];
}
