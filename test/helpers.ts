/** Shared test wiring: a scratch SQLite file, a fixed clock, the app built as main.ts builds it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import type { Account } from '../src/domain/accounts.js';
import { FixedClock } from '../src/domain/clock.js';
import { newId } from '../src/domain/ids.js';
import { DEFAULT_PLANS, type PlanLimits } from '../src/domain/plans.js';
import { createLogger } from '../src/logger.js';
import { createServices, type ServiceDeps, type Services } from '../src/service/index.js';
import { UsageCounters } from '../src/service/usage-counters.js';
import { type CachedReads, withReadCache } from '../src/store/cached-reads.js';
import type { ReadCache } from '../src/store/read-cache.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { type ServedCatalogue, serveCatalogue } from '../src/tools/catalogue.js';
import type { Tool } from '../src/tools/tool.js';

/** An account as a store keeps it, made at `at` (epoch seconds), with what a test does not care about filled in. */
export function accountRecord(at: number, over: Partial<Account> = {}): Account {
  return {
    id: newId('acc'),
    name: 'Acme',
    planId: 'free',
    status: 'active',
    unlimitedOverride: null,
    tokenBalance: 0,
    createdAt: at,
    updatedAt: at,
    planSince: at,
    lowBalance: null,
    ...over,
  };
}

/** 2026-04-15T13:55:29Z */
export const T0 = Date.UTC(2026, 3, 15, 13, 55, 29);
export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const KEY_SECRET = 'test-key-secret-0123456789abcdef0123456789';

/** Plan limits in slot order: enrich records 5h, 1w, requests 5h, then the same for search. */
export const limits = (
  er5: number,
  er1: number,
  eq5: number,
  sr5: number,
  sr1: number,
  sq5: number,
): PlanLimits => ({
  enrich: { records: { '5h': er5, '1w': er1 }, requests: { '5h': eq5 } },
  search: { records: { '5h': sr5, '1w': sr1 }, requests: { '5h': sq5 } },
});

export function scratchDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Harness {
  dir: string;
  dbPath: string;
  store: SqliteStore;
  /** The read cache in front of the store, as a server has it. */
  reads: CachedReads;
  clock: FixedClock;
  services: Services;
  /** What the services were made of: a test makes variants from it (createServices({ ...h.deps, ... })). */
  deps: ServiceDeps;
  /** The usage counters the services count calls into. */
  usageCounters: UsageCounters;
  close(): Promise<void>;
}

/** A migrated SQLite store in a fresh directory, and the services on it, with a fixed clock at T0. */
export async function scratchServices(
  opts: { keyPrefix?: string; lockWaitMs?: number; writerThread?: boolean; cache?: ReadCache } = {},
): Promise<Harness> {
  const { dir, cleanup } = scratchDir();
  const dbPath = join(dir, 'toolgate.db');
  const { store, reads } = withReadCache(
    (observer) =>
      new SqliteStore({
        path: dbPath,
        observer,
        ...(opts.lockWaitMs === undefined ? {} : { lockWaitMs: opts.lockWaitMs }),
        ...(opts.writerThread ? { writerThread: true } : {}),
      }),
    opts.cache,
  );
  const clock = new FixedClock(T0);
  await store.migrate(DEFAULT_PLANS, Math.floor(T0 / 1000));
  // Counted as a server counts; written when a test flushes (or at close), not on a timer.
  const usageCounters = new UsageCounters(store.usageHistory, clock);
  const deps = {
    store,
    reads,
    clock,
    keyPrefix: opts.keyPrefix ?? 'tg',
    keySecret: KEY_SECRET,
    usageCounters,
  };
  const services = createServices(deps);
  return {
    deps,
    dir,
    dbPath,
    store,
    reads,
    clock,
    services,
    usageCounters,
    async close() {
      await usageCounters.stop().catch(() => {});
      await store.close();
      cleanup();
    },
  };
}

export interface AppHarness extends Harness {
  app: FastifyInstance;
  /** The catalogue the app serves, when asked for one. */
  catalogue?: ServedCatalogue;
}

/** The HTTP app on a scratch store, for `inject` (no sockets). */
export async function scratchApp(
  opts: {
    adminToken?: string | null;
    tools?: readonly Tool[];
    keyPrefix?: string;
    lockWaitMs?: number;
    /**
     * Serve the tool catalogue, with `${NAME}` looked up in `env`, and only the variables of
     * `upstreamEnv` (TOOLGATE_UPSTREAM_ENV; default: the names of `env`) allowed, there and at import.
     */
    catalogue?: { env?: Record<string, string | undefined>; upstreamEnv?: string[]; pollMs?: number };
    /** Per-key requests per second (on the harness's fixed clock, one window until the clock moves). */
    perKeyPerSecond?: number;
  } = {},
): Promise<AppHarness> {
  const h = await scratchServices(opts);
  let services = h.services;
  let catalogue: ServedCatalogue | undefined;
  if (opts.catalogue) {
    const env = opts.catalogue.env ?? {};
    const upstreamEnv = opts.catalogue.upstreamEnv ?? Object.keys(env);
    const served = await serveCatalogue({
      catalogue: h.store.catalogue,
      env,
      upstreamEnv,
      ...(opts.catalogue.pollMs !== undefined ? { pollMs: opts.catalogue.pollMs } : {}),
    });
    catalogue = served;
    // As the server wires it: a change made through these services is served at once.
    services = createServices({ ...h.deps, upstreamEnv, catalogueChanged: () => served.refresh() });
  }
  const app = await buildApp({
    services,
    adminToken: opts.adminToken === undefined ? ADMIN_TOKEN : opts.adminToken,
    ...(opts.tools ? { tools: opts.tools } : {}),
    ...(catalogue ? { catalogue } : {}),
    ...(opts.perKeyPerSecond !== undefined
      ? { rateLimits: { perKeyPerSecond: opts.perKeyPerSecond, authFailuresPerMinute: 0, clock: h.clock } }
      : {}),
  });
  return {
    ...h,
    services,
    app,
    ...(catalogue ? { catalogue } : {}),
    async close() {
      await app.close();
      await catalogue?.close();
      await h.close();
    },
  };
}

/** An account with one key; returns the ids and the full key. */
export async function accountWithKey(
  services: Services,
  input: { name?: string; plan?: string; tokens?: number; unlimited?: boolean } = {},
): Promise<{ accountId: string; keyId: string; key: string }> {
  const account = await services.accounts.create({ name: input.name ?? 'Acme', ...input });
  if (!account.ok) throw new Error(account.error.message);
  const key = await services.keys.create(account.value.id, 'test');
  if (!key.ok) throw new Error(key.error.message);
  return { accountId: account.value.id, keyId: key.value.id, key: key.value.key };
}

/** An account on a plan of its own with these enrich limits (search limits of 1); returns its id. */
export async function accountOnPlan(
  services: Services,
  enrich: { records5h: number; records1w: number; requests5h: number },
): Promise<string> {
  const id = `plan_${Math.random().toString(36).slice(2, 10)}`;
  const limits = {
    enrich: {
      records: { '5h': enrich.records5h, '1w': enrich.records1w },
      requests: { '5h': enrich.requests5h },
    },
    search: { records: { '5h': 1, '1w': 1 }, requests: { '5h': 1 } },
  };
  const plan = await services.plans.put(id, { limits });
  if (!plan.ok) throw new Error(plan.error.message);
  const account = await services.accounts.create({ name: id, plan: id });
  if (!account.ok) throw new Error(account.error.message);
  return account.value.id;
}

/** A logger at `level` as the server makes it, writing into memory: the raw lines and each parsed. */
export function captureLogs(level: string) {
  const raw: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) {
        raw.push(l);
        // A line that is not JSON is kept for the test to see, not thrown inside the logger's stream.
        try {
          lines.push(JSON.parse(l));
        } catch {
          lines.push({ unparsed: l });
        }
      }
      done();
    },
  });
  return { logger: createLogger(level, sink), lines, raw };
}
