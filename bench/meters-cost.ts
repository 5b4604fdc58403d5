/**
 * @module What a consumption costs as a plan's meters grow, in process: the same consumption (one
 * record and one request) on a plan of the default plans' shape (2 categories, 6 windows) and on a
 * plan of 16 categories of 4 windows each (64, every one running), through the usage service and the
 * read cache as a server has them, alternated in rounds. CPU of this process per consumption
 * (process.cpuUsage: every thread, the store's included; PostgreSQL's own backends not).
 * `node .bench/bench/meters-cost.js [--backends sqlite,postgres] [--accounts 2000] [--batch 200] [--batches 20] [--rounds 6] [--no-results]`
 * The figures go into bench/results/latest.json as `meters_cost` (scenarios/meters-cost.ts), and
 * docs/performance.md's targets table is made again.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../src/domain/clock.js';
import { DEFAULT_PLANS, type PlanLimits } from '../src/domain/plans.js';
import { createServices, type Services } from '../src/service/index.js';
import { withReadCache } from '../src/store/cached-reads.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { type Backend, DEFAULT_POSTGRES_URL } from './lib/args.js';
import { cleanupAll } from './lib/cleanup.js';
import { createScratchSchema } from './lib/postgres.js';
import { formatJson, type LatestEntry, merge, readLatest } from './lib/results.js';
import { METERS_COST_ID, METERS_COST_TITLE } from './scenarios/meters-cost.js';
import { LATEST_FILE, updateDoc } from './table.js';

const { values } = parseArgs({
  options: {
    backends: { type: 'string' },
    accounts: { type: 'string' },
    batch: { type: 'string' },
    batches: { type: 'string' },
    rounds: { type: 'string' },
    'postgres-url': { type: 'string' },
    json: { type: 'boolean' },
    'no-results': { type: 'boolean' },
  },
});
const BACKENDS = (values.backends ?? 'sqlite,postgres').split(',');
const ACCOUNTS = Number(values.accounts ?? 2000);
const BATCH = Number(values.batch ?? 200);
const BATCHES = Number(values.batches ?? 20);
const ROUNDS = Number(values.rounds ?? 6);
const POSTGRES_URL =
  values['postgres-url'] ?? (process.env.TOOLGATE_BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL);

/** Out of reach: every consumption of the run is granted, none refused. */
const ROOM = 1_000_000_000;
const ROOMY = { records: { '5h': ROOM, '1w': ROOM }, requests: { '5h': ROOM } };
const DEFAULT_SHAPE: PlanLimits = { enrich: ROOMY, search: ROOMY };
const CATEGORIES = Array.from({ length: 16 }, (_, i) => `meter_${i}`);
const WIDE: PlanLimits = Object.fromEntries(
  CATEGORIES.map((c) => [c, { records: { '5h': ROOM, '1w': ROOM }, requests: { '5h': ROOM, '1d': ROOM } }]),
);

export interface Side {
  plan: string;
  categories: readonly string[];
  accounts: string[];
}

async function seed(services: Services, plan: string, limits: PlanLimits): Promise<Side> {
  const put = await services.plans.put(plan, { limits });
  if (!put.ok) throw new Error(put.error.message);
  const categories = Object.keys(limits);
  const accounts: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const created = await services.accounts.create({ name: `${plan} ${i}`, plan });
    if (!created.ok) throw new Error(created.error.message);
    accounts.push(created.value.id);
  }
  // Every window of every account running: the cost of a consumption among all of them.
  // A batch's worth at a time: PostgreSQL's pool bounds how long a read may wait for a connection.
  for (let i = 0; i < accounts.length; i += BATCH)
    await Promise.all(
      accounts.slice(i, i + BATCH).map(async (id) => {
        for (const category of categories) await consume(services, id, category);
      }),
    );
  return { plan, categories, accounts };
}

async function consume(services: Services, accountId: string, category: string): Promise<void> {
  const r = await services.usage.record(accountId, { category, records: 1 });
  if (!r.ok) throw new Error(`${accountId} ${category}: ${r.error.message}`);
}

/** A deterministic pseudo-random sequence (xorshift32): the same accounts drawn on every run. */
function draws(seed: number): () => number {
  let x = seed | 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/**
 * CPU microseconds of this process per consumption: `BATCHES` times `BATCH` consumptions at once,
 * each of an account drawn at random (as traffic comes: scattered over the table, not the rows of a
 * few pages) in a category drawn at random among its plan's.
 */
async function round(services: Services, side: Side, turn: number): Promise<number> {
  const next = draws(turn * 7919 + 17);
  const picks: [string, string][][] = [];
  for (let b = 0; b < BATCHES; b++) {
    const batch: [string, string][] = [];
    const seen = new Set<string>();
    while (batch.length < Math.min(BATCH, side.accounts.length)) {
      const id = side.accounts[Math.floor(next() * side.accounts.length)]!;
      if (seen.has(id)) continue;
      seen.add(id);
      batch.push([id, side.categories[Math.floor(next() * side.categories.length)]!]);
    }
    picks.push(batch);
  }
  const cpu = process.cpuUsage();
  for (const batch of picks)
    await Promise.all(batch.map(([id, category]) => consume(services, id, category)));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / (BATCHES * picks[0]!.length);
}

export interface Measured {
  backend: Backend;
  default_us: number[];
  wide_us: number[];
}

async function measure(backend: Backend, store: Store, reads: Parameters<typeof createServices>[0]['reads']) {
  await store.migrate(DEFAULT_PLANS, Math.floor(Date.now() / 1000));
  const services = createServices({
    store,
    ...(reads ? { reads } : {}),
    clock: systemClock,
    keyPrefix: 'tg',
    keySecret: 'meters-cost-key-secret-0123456789abcdef012',
  });
  const sides = {
    default: await seed(services, 'bench_default', DEFAULT_SHAPE),
    wide: await seed(services, 'bench_wide', WIDE),
  };
  // Warm-up: the JIT, the caches.
  await round(services, sides.default, 0);
  await round(services, sides.wide, 0);
  const m: Measured = { backend, default_us: [], wide_us: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['default', 'wide'] as const) : (['wide', 'default'] as const);
    for (const which of order) m[`${which}_us`].push(await round(services, sides[which], r + 1));
  }
  return m;
}

/** A run's figures as the figures file keeps a scenario's: the default plan is the baseline side. */
function entryOf(m: Measured): LatestEntry {
  const rate = (us: number) => Math.round(1e6 / us);
  const d = median(m.default_us);
  const w = median(m.wide_us);
  const none = { baseline: null, toolgate: null };
  return {
    id: METERS_COST_ID,
    backend: m.backend,
    title: METERS_COST_TITLE,
    measured_at: new Date().toISOString(),
    commit: commit(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? '', node: process.version },
    run: { rounds: ROUNDS, duration_s: 0, warmup_s: 0, connections: BATCH, accounts: ACCOUNTS },
    rps: {
      baseline: rate(d),
      toolgate: rate(w),
      ratio: round2(d / w),
      ratio_by_round: m.default_us.map((du, i) => round2(du / m.wide_us[i]!)),
    },
    p99_ms: none,
    cpu_us_per_request: { baseline: round2(d), toolgate: round2(w) },
    peak_rss_mib: none,
    other_cores: null,
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function commit(): string | null {
  const r = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const results: Measured[] = [];
for (const backend of BACKENDS) {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-meters-cost-'));
    const { store, reads } = withReadCache(
      (observer) => new SqliteStore({ path: join(dir, 't.db'), observer, backgroundCheckpoints: true }),
    );
    try {
      results.push(await measure(backend, store, reads));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  } else if (backend === 'postgres') {
    const schema = await createScratchSchema(POSTGRES_URL);
    const { store, reads } = withReadCache(
      (observer) => new PostgresStore({ url: POSTGRES_URL, schema, observer }),
    );
    try {
      results.push(await measure(backend, store, reads));
    } finally {
      await store.close();
      await cleanupAll();
    }
  } else throw new Error(`no backend "${backend}"`);
}

if (!values['no-results'] && results.length > 0) {
  const file = readLatest(LATEST_FILE);
  writeFileSync(LATEST_FILE, formatJson(merge(file, results.map(entryOf))));
  updateDoc();
  process.stderr.write(
    `meters-cost: recorded ${results.map((m) => m.backend).join(', ')} in ${LATEST_FILE}\n`,
  );
}

if (values.json) process.stdout.write(`${JSON.stringify(results)}\n`);
else {
  process.stdout.write(
    `consumption CPU per call, ${ACCOUNTS} accounts, ${BATCHES} x ${BATCH} at a time x ${ROUNDS} rounds (median, range), µs:\n`,
  );
  for (const m of results) {
    const d = median(m.default_us);
    const w = median(m.wide_us);
    const range = (xs: number[]) => `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}`;
    process.stdout.write(
      `  ${m.backend.padEnd(8)} default plan ${d.toFixed(1)} (${range(m.default_us)})  16x4 plan ${w.toFixed(1)} (${range(m.wide_us)})  ratio ${(w / d).toFixed(2)}\n`,
    );
  }
}
