/**
 * @module What the customer alerts cost a consumption, in process: the same consumption (one record
 * and one request, on a plan of the default shape, far from its limits: the common case, crossing
 * nothing) with no thresholds carried (alerts off, no endpoint wanting any) and with 80 and 100
 * carried into every consumption (alerts on), through the usage service and the read cache as a
 * server has them, alternated in rounds on the same accounts. CPU of this process per consumption.
 * First, the work alerts add to a consumption alone, timed in a loop: deciding that none of its
 * windows crossed 80 or 100 (what the store's transaction runs when thresholds are carried).
 * `node .bench/bench/alert-thresholds-cost.js [--backends sqlite,postgres] [--accounts 2000] [--batch 200] [--batches 20] [--rounds 8]`
 * Prints its figures; records nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ALERT_THRESHOLDS } from '../src/domain/alerts.js';
import { systemClock } from '../src/domain/clock.js';
import { applyConsumption, incrementsFor, isRunning } from '../src/domain/fair-use.js';
import { findWindow } from '../src/domain/fair-use-order.js';
import { DEFAULT_PLANS, type PlanLimits } from '../src/domain/plans.js';
import { thresholdEvents } from '../src/domain/webhooks.js';
import { createServices, type Services } from '../src/service/index.js';
import { type Reads, withReadCache } from '../src/store/cached-reads.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { DEFAULT_POSTGRES_URL } from './lib/args.js';
import { cleanupAll } from './lib/cleanup.js';
import { createScratchSchema } from './lib/postgres.js';

const { values } = parseArgs({
  options: {
    backends: { type: 'string' },
    accounts: { type: 'string' },
    batch: { type: 'string' },
    batches: { type: 'string' },
    rounds: { type: 'string' },
  },
});
const BACKENDS = (values.backends ?? 'sqlite,postgres').split(',');
const ACCOUNTS = Number(values.accounts ?? 2000);
const BATCH = Number(values.batch ?? 200);
const BATCHES = Number(values.batches ?? 20);
const ROUNDS = Number(values.rounds ?? 8);
const POSTGRES_URL = process.env.TOOLGATE_BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL;

const ROOM = 1_000_000_000;
const ROOMY = { records: { '5h': ROOM, '1w': ROOM }, requests: { '5h': ROOM } };
const LIMITS: PlanLimits = { enrich: ROOMY, search: ROOMY };

async function consume(services: Services, accountId: string): Promise<void> {
  const r = await services.usage.record(accountId, { category: 'enrich', records: 1 });
  if (!r.ok) throw new Error(r.error.message);
}

/** CPU µs per consumption: BATCHES x BATCH at once, accounts drawn in turn (`turn` shifts them). */
async function round(services: Services, accounts: string[], turn: number): Promise<number> {
  const cpu = process.cpuUsage();
  for (let b = 0; b < BATCHES; b++) {
    const start = ((turn * BATCHES + b) * BATCH) % accounts.length;
    const batch = Array.from({ length: BATCH }, (_, i) => accounts[(start + i) % accounts.length]!);
    await Promise.all(batch.map((id) => consume(services, id)));
  }
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / (BATCHES * BATCH);
}

async function measure(store: Store, reads: Reads): Promise<{ off: number[]; on: number[] }> {
  await store.migrate(DEFAULT_PLANS, Math.floor(Date.now() / 1000));
  const base = { store, reads, clock: systemClock, keyPrefix: 'tg', keySecret: 'x'.repeat(40) };
  const off = createServices({ ...base, webhookInterest: { thresholdsFor: () => undefined } });
  const on = createServices({ ...base, webhookInterest: { thresholdsFor: () => ALERT_THRESHOLDS } });
  const put = await off.plans.put('bench_alerts', { limits: LIMITS });
  if (!put.ok) throw new Error(put.error.message);
  const accounts: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const created = await off.accounts.create({ name: `a${i}`, plan: 'bench_alerts' });
    if (!created.ok) throw new Error(created.error.message);
    accounts.push(created.value.id);
  }
  await round(off, accounts, 0);
  await round(on, accounts, 0);
  const m = { off: [] as number[], on: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
    for (const which of order) m[which].push(await round(which === 'on' ? on : off, accounts, r + 1));
  }
  return m;
}

/** Nanoseconds per consumption of deciding its crossings, as the stores do it, on a window well below 80%. */
function thresholdsAlone(): number {
  const now = 1_800_000_000;
  const increments = incrementsFor(LIMITS, 'enrich', { records: 1, requests: 1 });
  const first = applyConsumption([], increments, now);
  if (!first.ok) throw new Error('no room');
  const before = first.states;
  const after = applyConsumption(before, increments, now + 1);
  if (!after.ok) throw new Error('no room');
  let events = 0;
  const n = 2_000_000;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    // The two closures and the call each consumption makes when it carries thresholds.
    const usedBefore = (inc: (typeof increments)[number]) => {
      const w = findWindow(before, inc);
      return isRunning(w, now) ? w.used : 0;
    };
    const stamp = () => ({ id: 'msg_x', at: now });
    events += thresholdEvents('acc_x', increments, usedBefore, after.states, ALERT_THRESHOLDS, stamp).length;
  }
  const ns = Number(process.hrtime.bigint() - t0) / n;
  if (events !== 0) throw new Error('a window crossed');
  return ns;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[]) => `${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)}`;

process.stdout.write(
  `deciding a consumption's crossings of 80 and 100 (3 windows, none crossed): ${thresholdsAlone().toFixed(0)} ns\n`,
);
process.stdout.write(
  `consumption CPU per call, ${ACCOUNTS} accounts, ${BATCHES} x ${BATCH} at a time x ${ROUNDS} rounds (median, range), µs:\n`,
);
for (const backend of BACKENDS) {
  let m: { off: number[]; on: number[] };
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-alerts-cost-'));
    const { store, reads } = withReadCache(
      (observer) => new SqliteStore({ path: join(dir, 't.db'), observer, backgroundCheckpoints: true }),
    );
    try {
      m = await measure(store, reads);
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
      m = await measure(store, reads);
    } finally {
      await store.close();
      await cleanupAll();
    }
  } else continue;
  const ratios = m.off.map((o, i) => (m.on[i]! / o).toFixed(2)).join(' ');
  process.stdout.write(
    `  ${backend.padEnd(8)} alerts off ${median(m.off).toFixed(1)} (${range(m.off)})  on ${median(m.on).toFixed(1)} (${range(m.on)})  on/off ${(median(m.on) / median(m.off)).toFixed(3)}  by round ${ratios}\n`,
  );
}
