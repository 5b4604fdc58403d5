/**
 * A live toolgate with OAuth on, listening on a port: an in-process app on a real store (SQLite
 * file or a fresh PostgreSQL schema), its public URL the address it listens on. The console is always
 * on (the consent page is its own); unless `console: true` (its own sign-in, links mailed to an SMTP
 * sink), the signed-in person is the one the test names (`signIn`), given to the console as the
 * ConsoleIdentity it asks. CSRF tokens are the console's: read them from the page (flow.ts csrfOf).
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { ConsoleIdentity, SignedIn } from '../../src/console/identity.js';
import { type Clock, FixedClock } from '../../src/domain/clock.js';
import { DEFAULT_PLANS } from '../../src/domain/plans.js';
import { connectedApps } from '../../src/oauth/connected-apps.js';
import { OAuthServer } from '../../src/oauth/server.js';
import { createServices, type Services } from '../../src/service/index.js';
import { withReadCache } from '../../src/store/cached-reads.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { serveCatalogue } from '../../src/tools/catalogue.js';
import { type SmtpSink, startSmtpSink } from '../console/smtp-sink-helpers.js';
import { KEY_SECRET, scratchDir, T0 } from '../helpers.js';
import { POSTGRES_URL, scratchSchemaName } from '../postgres.js';

export type Backend = 'sqlite' | 'postgres';

/** A stand-in for the console's identity: who is signed in is set by the test, per browser cookie. */
export class TestIdentity implements ConsoleIdentity {
  /** Session cookie value -> person. */
  readonly sessions = new Map<string, SignedIn>();

  /** A cookie that signs `person` in (set it in the browser or the jar). */
  signIn(person: SignedIn): string {
    const value = randomBytes(12).toString('hex');
    this.sessions.set(value, person);
    return `tg_test_session=${value}`;
  }

  async who(request: Parameters<ConsoleIdentity['who']>[0]) {
    const cookie = request.headers.cookie ?? '';
    const value = /(?:^|;\s*)tg_test_session=([0-9a-f]+)/.exec(cookie)?.[1];
    return value ? this.sessions.get(value) : undefined;
  }

  redirectToSignIn(reply: Parameters<ConsoleIdentity['redirectToSignIn']>[0], returnTo: string) {
    return reply.redirect(`/console/sign-in?return_to=${encodeURIComponent(returnTo)}`, 303);
  }
}

export interface Live {
  url: string;
  app: FastifyInstance;
  store: Store;
  services: Services;
  oauth: OAuthServer;
  identity: TestIdentity;
  /** The SQLite file, or the PostgreSQL schema. */
  where: string;
  /** Where the console's sign-in links go, with `console: true`. */
  sink?: SmtpSink;
  close(): Promise<void>;
}

export interface LiveOptions {
  accessTokenTtl?: number;
  /** The clock the bearer check judges expiry by (the provider's own is the system's). */
  clock?: Clock;
  fetch?: typeof fetch;
  /** The console's own sign-in (links mailed to an SMTP sink) instead of TestIdentity. */
  console?: boolean;
  /** Serve the tool catalogue (tools added with services.catalogue.import). */
  catalogue?: boolean;
  /** PostgreSQL: this existing schema (another server's), left in place at close. */
  schema?: string;
  /** TOOLGATE_PUBLIC_URL (servers of one deployment share it); default the address listened on. */
  publicUrl?: string;
  /** PostgreSQL: connect here instead of POSTGRES_URL (a TCP proxy in front of it). */
  databaseUrl?: string;
  /** PostgreSQL: how long to wait on the database before answering unavailable. */
  databaseTimeoutMs?: number;
  /** OAuthServer's options of the same names. */
  registrationsPerAddress?: number;
  maxUnusedClients?: number;
}

export async function liveServer(backend: Backend, opts: LiveOptions = {}): Promise<Live> {
  let cleanup: () => Promise<void>;
  let where = '';
  const { store, reads } = withReadCache((observer) => {
    if (backend === 'sqlite') {
      const dir = scratchDir();
      cleanup = async () => dir.cleanup();
      where = `${dir.dir}/toolgate.db`;
      return new SqliteStore({ path: where, observer });
    }
    where = opts.schema ?? scratchSchemaName();
    const pg = new PostgresStore({
      url: opts.databaseUrl ?? POSTGRES_URL,
      schema: where,
      observer,
      ...(opts.databaseTimeoutMs
        ? { connectTimeoutMs: opts.databaseTimeoutMs, statementTimeoutMs: opts.databaseTimeoutMs }
        : {}),
    });
    cleanup = opts.schema ? async () => {} : () => pg.dropSchema().catch(() => {});
    return pg;
  });
  await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  const base = { store, reads, clock: new FixedClock(Date.now()), keyPrefix: 'tg', keySecret: KEY_SECRET };
  const catalogue = opts.catalogue
    ? await serveCatalogue({ catalogue: store.catalogue, env: {}, upstreamEnv: [] })
    : undefined;
  const identity = new TestIdentity();
  let url = '';
  // As the server makes them: OAuth first, its bearer check handed to the key service.
  const oauth = new OAuthServer({
    store,
    reads,
    secret: KEY_SECRET,
    publicUrl: () => opts.publicUrl ?? url,
    ...(opts.accessTokenTtl ? { accessTokenTtl: opts.accessTokenTtl } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
    ...(opts.registrationsPerAddress !== undefined
      ? { registrationsPerAddress: opts.registrationsPerAddress }
      : {}),
    ...(opts.maxUnusedClients !== undefined ? { maxUnusedClients: opts.maxUnusedClients } : {}),
  });
  const services = createServices(
    catalogue ? { ...base, catalogueChanged: () => catalogue.refresh() } : base,
    oauth.bearer,
  );
  const sink = opts.console ? await startSmtpSink() : undefined;
  const app = await buildApp({
    services,
    oauth,
    connectedApps: connectedApps(oauth),
    ...(catalogue ? { catalogue } : {}),
    ...(sink
      ? { console: { publicUrl: () => url, smtpUrl: sink.url, smtpFrom: 'toolgate <console@toolgate.test>' } }
      : { console: { publicUrl: () => opts.publicUrl ?? url }, consoleIdentity: identity }),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    url,
    app,
    store,
    services,
    oauth,
    identity,
    where,
    ...(sink ? { sink } : {}),
    async close() {
      await app.close();
      await sink?.close();
      await catalogue?.close();
      await store.close();
      await cleanup();
    },
  };
}

/** A person who belongs to these accounts (each as a user added to it). */
export async function person(
  { services, store }: { services: Services; store: Store },
  email: string,
  accountIds: string[],
): Promise<SignedIn> {
  const memberships: SignedIn['memberships'] = [];
  for (const accountId of accountIds) {
    const user = await services.users.add(accountId, email, 'owner');
    if (!user.ok) throw new Error(user.error.message);
    const account = await store.accounts.get(accountId);
    memberships.push({ accountId, accountName: account!.name, userId: user.value.id, role: 'owner' });
  }
  return { email, sessionId: `ses_${randomBytes(6).toString('hex')}`, memberships };
}
