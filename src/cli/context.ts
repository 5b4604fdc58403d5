/**
 * @module Wiring for one CLI command: the configuration, the store on TOOLGATE_DATABASE_URL (migrated,
 * so a fresh database works), the services on it acting as the OS user (so every change is
 * audited); the store is closed when the command ends.
 * Configuration and store are imported on first use: the configuration schema alone takes a third of
 * a second to load, which `--help` and usage errors need not pay.
 */
import { userInfo } from 'node:os';
import type { Config, DatabaseConfig } from '../config.js';
import { nowSeconds, systemClock } from '../domain/clock.js';
import { StoreUnavailableError } from '../domain/errors.js';
import { DEFAULT_PLANS } from '../domain/plans.js';
import { actingAs } from '../service/audit.js';
import type { Services } from '../service/index.js';
import type { Store } from '../store/store.js';
import { type Admin, localAdmin } from './admin-port.js';
import { CliError } from './output.js';
import { refuseClearText } from './remote-transport.js';

async function open() {
  const [{ loadConfig }, { resolveKeySecrets }, { openStore }, { createServices }] = await Promise.all([
    import('../config.js'),
    import('../key-secret.js'),
    import('../store/open.js'),
    import('../service/index.js'),
  ]);
  const config = loadConfig();
  return { config, resolveKeySecrets, openStore, createServices };
}

/** Where the database is, for people: the SQLite file's path, or PostgreSQL's host:port and database (never credentials). */
export function databasePlace(db: DatabaseConfig): string {
  if (db.kind === 'sqlite') return `the SQLite database ${db.path}`;
  try {
    const url = new URL(db.url);
    return `PostgreSQL at ${url.hostname || 'localhost'}:${url.port || '5432'}${url.pathname}`;
  } catch {
    return 'PostgreSQL (TOOLGATE_DATABASE_URL)';
  }
}

/**
 * What went wrong with the database as a CliError that names it: an operator reading
 * `file is not a database` or `EACCES` must know which file, or which host:port, it was.
 */
function placed(err: unknown, db: DatabaseConfig, opening: boolean): unknown {
  if (err instanceof CliError) return err;
  const reason = err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.message) : String(err);
  const detail = err instanceof Error && reason !== err.message ? `${reason}: ${err.message}` : reason;
  if (err instanceof StoreUnavailableError)
    return new CliError('unavailable', `${databasePlace(db)} cannot be reached: ${err.message}.`);
  if (opening) return new CliError('unavailable', `Cannot use ${databasePlace(db)}: ${detail}.`);
  return err;
}

/** Opens (and, with `migrate`, migrates) the store, naming the database in any failure. */
async function openNamed(
  config: Config,
  openStore: (db: DatabaseConfig) => Promise<Store>,
  migrate: boolean,
): Promise<Store> {
  let store: Store | undefined;
  try {
    store = await openStore(config.database);
    if (migrate) await store.migrate(DEFAULT_PLANS, nowSeconds(systemClock));
    return store;
  } catch (err) {
    await store?.close().catch(() => {});
    throw placed(err, config.database, true);
  }
}

/** Runs `work` on the configured store, as it is (not migrated first). */
export async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const { config, openStore } = await open();
  const store = await openNamed(config, openStore, false);
  try {
    return await work(store);
  } catch (err) {
    // A migration is the work here: what it could not do is the database's.
    throw placed(err, config.database, true);
  } finally {
    await store.close();
  }
}

/** Who acts through the CLI, for the audit trail: `cli:<OS user name>`, or `cli` where the OS cannot say. */
export function cliActor(): string {
  try {
    const { username } = userInfo();
    return username ? `cli:${username}` : 'cli';
  } catch {
    // No passwd entry for the uid (some containers): still audited, just without a name.
    return 'cli';
  }
}

/** Runs `work` with the services on the configured store, migrated first. */
export async function withServices<T>(work: (services: Services) => Promise<T>): Promise<T> {
  const { config, resolveKeySecrets, openStore, createServices } = await open();
  const [keySecret, ...previousKeySecrets] = resolveKeySecrets(config);
  const store = await openNamed(config, openStore, true);
  const { openPayments } = await import('../payments/open.js');
  const payments = await openPayments(config.payments, systemClock);
  try {
    return await work(
      createServices({
        store,
        clock: systemClock,
        keyPrefix: config.keyPrefix,
        keySecret: keySecret!,
        previousKeySecrets,
        webhookAllowPrivate: config.webhookAllowPrivate,
        upstreamEnv: config.upstreamEnv,
        ...(payments ? { payments } : {}),
      }),
    );
  } catch (err) {
    throw placed(err, config.database, false);
  } finally {
    await store.close();
  }
}

/**
 * Runs `work` with the admin port: over the admin API of `opts.url` (`--url` or TOOLGATE_URL) with
 * TOOLGATE_ADMIN_TOKEN, else on the database as withServices does. Commands never know which.
 * A plain http URL must be loopback, or allowed (`--allow-http`): see remote-transport.ts.
 */
export async function withAdmin<T>(
  opts: { url?: string; allowHttp?: boolean },
  work: (admin: Admin) => Promise<T>,
): Promise<T> {
  // Every change made on the database is audited as the CLI's user.
  if (opts.url === undefined) return withServices((s) => work(localAdmin(s, actingAs(cliActor()))));
  // Before anything is read or sent: the token goes in clear to this machine only (or when allowed).
  refuseClearText(opts.url, opts.allowHttp);
  const [{ parseAdminTokens }, { ToolgateAdminClient }, { remoteAdmin }] = await Promise.all([
    import('../config.js'),
    import('../client/admin-client.js'),
    import('./remote.js'),
  ]);
  let token: string | undefined;
  try {
    // The server's own form works here too: with `name:token` pairs, the first one's token is sent.
    token = parseAdminTokens(process.env.TOOLGATE_ADMIN_TOKEN)[0]?.token;
  } catch (err) {
    throw new CliError('invalid_configuration', `TOOLGATE_ADMIN_TOKEN ${(err as Error).message}.`);
  }
  if (token === undefined) {
    throw new CliError(
      'invalid_configuration',
      `TOOLGATE_ADMIN_TOKEN must be set to one of ${opts.url}'s admin tokens to work through its admin API.`,
    );
  }
  return work(remoteAdmin(new ToolgateAdminClient({ baseUrl: opts.url, adminToken: token })));
}
