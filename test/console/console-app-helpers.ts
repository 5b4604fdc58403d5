/**
 * @module The console in process, for its security tests: the app built as the server builds it, on
 * a scratch SQLite file or a scratch PostgreSQL schema, with a fixed clock the test moves (links age,
 * sessions idle), listening on a loopback port for plain fetch, mailing through a real SMTP sink.
 * Also the routes the app registered, read from Fastify itself, so a new console route cannot
 * escape the tests that walk them.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Brand } from '../../src/domain/brand.js';
import { FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import type { PaymentDeps } from '../../src/service/context.js';
import { createServices, type Services } from '../../src/service/index.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { ADMIN_TOKEN, KEY_SECRET, scratchDir, T0 } from '../helpers.js';
import { POSTGRES_URL, scratchSchemaName } from '../postgres.js';
import { ConsoleClient, type Form, forms, type Page } from './console-client-helpers.js';
import { consoleLink, type SmtpSink, startSmtpSink } from './smtp-sink-helpers.js';

export type Backend = 'sqlite' | 'postgres';

export interface ConsoleApp {
  url: string;
  app: FastifyInstance;
  clock: FixedClock;
  services: Services;
  store: Store;
  sink: SmtpSink;
  close(): Promise<void>;
}

export interface ConsoleAppOptions {
  /** TOOLGATE_PUBLIC_URL (default: the address the app listens on). */
  publicUrl?: string;
  /** Read X-Forwarded-For as the client's address. */
  trustProxy?: boolean;
  /** Payments on, through this provider (a local Stripe-compatible server's). */
  payments?: PaymentDeps;
  /** The operator's brand (TOOLGATE_BRAND_*). */
  brand?: Brand;
}

async function openStore(backend: Backend): Promise<{ store: Store; reads: any; drop: () => Promise<void> }> {
  if (backend === 'sqlite') {
    const { dir, cleanup } = scratchDir();
    const { store, reads } = withReadCache((observer) => new SqliteStore({ path: `${dir}/t.db`, observer }));
    return { store, reads, drop: async () => cleanup() };
  }
  const schema = scratchSchemaName();
  const { store, reads } = withReadCache(
    (observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }),
  );
  return { store, reads, drop: () => (store as PostgresStore).dropSchema().catch(() => {}) };
}

/** The app with its console, on `backend`, listening on 127.0.0.1. */
export async function consoleApp(backend: Backend, opts: ConsoleAppOptions = {}): Promise<ConsoleApp> {
  const { store, reads, drop } = await openStore(backend);
  await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  const clock = new FixedClock(T0);
  const services = createServices({
    store,
    reads,
    clock,
    keyPrefix: 'tg',
    keySecret: KEY_SECRET,
    ...(opts.payments ? { payments: opts.payments } : {}),
  });
  const sink = await startSmtpSink();
  let url = '';
  const app = await buildApp({
    services,
    adminToken: ADMIN_TOKEN,
    ...(opts.trustProxy ? { trustProxy: true } : {}),
    ...(opts.brand ? { brand: opts.brand } : {}),
    console: {
      // The port is known once the app listens; links are made after that.
      publicUrl: () => opts.publicUrl ?? url,
      smtpUrl: sink.url,
      smtpFrom: 'toolgate <console@toolgate.test>',
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    app,
    clock,
    services,
    store,
    sink,
    async close() {
      await app.close();
      await sink.close();
      await drop();
      await store.close();
    },
  };
}

export interface Route {
  method: string;
  path: string;
}

/** Every route the app registered (Fastify's own tree, commonPrefix off: each line a whole piece). */
export function registeredRoutes(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^(.*?)(?:├── |└── )(.*)$/.exec(line);
    if (!m) continue;
    const depth = [...(m[1] ?? '')].length / 4;
    const piece = /^(.*?)(?: \(([^)]*)\))?$/.exec(m[2] ?? '');
    stack.length = depth;
    stack.push(piece?.[1] ?? '');
    for (const method of piece?.[2]?.split(', ') ?? []) routes.push({ method, path: stack.join('') });
  }
  return routes;
}

/** The console's routes that take a path parameter, or change something (POST and the like). */
export function consoleRoutes(app: FastifyInstance): Route[] {
  return registeredRoutes(app).filter((r) => r.path.startsWith('/console') && r.method !== 'HEAD');
}

/** A user of an account, made through the services as an operator would. */
export async function addUser(
  services: Services,
  accountId: string,
  email: string,
  role: 'owner' | 'member',
) {
  const user = await services.users.add(accountId, email, role);
  if (!user.ok) throw new Error(user.error.message);
  return user.value;
}

/** Follows a sign-in link as a browser would (a confirm form on its page is submitted). */
export async function followLink(client: ConsoleClient, url: string): Promise<Page> {
  const landing = await openLink(client, url);
  const confirm = forms(landing.body, landing.url).find(
    (f) => f.method === 'POST' && new URL(f.action, landing.url).pathname === '/console/auth',
  );
  return confirm ? client.submit(confirm) : landing;
}

/** The page a sign-in link opens, as a mail scanner or a link preview fetches it: nothing clicked. */
export function openLink(client: ConsoleClient, url: string): Promise<Page> {
  return client.get(new URL(url).pathname + new URL(url).search);
}

/** Asks for a link on the sign-in form; the page answered. */
export async function askForLink(client: ConsoleClient, email: string): Promise<Page> {
  const page = await client.get('/console/sign-in');
  const form = signInForm(page);
  const field = Object.keys(form.fields).find((k) => /email/i.test(k)) ?? 'email';
  return client.submit(form, { [field]: email });
}

function signInForm(page: Page): Form {
  const form = forms(page.body, page.url).find(
    (f) =>
      f.method === 'POST' &&
      (/type\s*=\s*["']?email/i.test(f.html) || Object.keys(f.fields).some((k) => /email/i.test(k))),
  );
  if (!form) throw new Error(`no sign-in form on ${page.url}:\n${page.body.slice(0, 2000)}`);
  return form;
}

export { ConsoleClient, consoleLink };
