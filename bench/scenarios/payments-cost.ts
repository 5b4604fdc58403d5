/**
 * @module What payments cost the tool routes. Two toolgate processes on one database of their own:
 * one with payments on (TOOLGATE_STRIPE_SECRET_KEY and its webhook secret set; no call reaches
 * Stripe while tools are called), one without. The load is get_billing, the tool that reads the
 * account's Stripe state, alternated between them (ABBA rounds, as every scenario): payments must
 * cost the tool routes nothing measurable (on / off >= 0.98).
 */
import { randomBytes } from 'node:crypto';
import { accountToolCalls } from '../lib/load.js';
import { probe, scratchDatabase } from '../lib/postgres.js';
import { seed } from '../lib/seeding.js';
import {
  setToolgateEnv,
  startToolgatePostgres,
  startToolgateSqlite,
  type ToolgateTarget,
} from '../lib/targets.js';
import { PEAK_RSS_MIB, type Scenario } from './scenario.js';

const TARGET = 0.98;
const LOAD_KEYS = 1_000;
const PAYMENTS_ON = {
  TOOLGATE_STRIPE_SECRET_KEY: 'sk_test_bench_never_called',
  TOOLGATE_STRIPE_WEBHOOK_SECRET: 'whsec_bench_never_called',
};

interface Setup {
  on: ToolgateTarget;
  off: ToolgateTarget;
  loadKeys: string[];
}

const setups = new Map<string, Promise<Setup>>();
const ready = new Map<string, Setup>();

async function setUp(backend: 'sqlite' | 'postgres'): Promise<Setup> {
  const keySecret = randomBytes(32).toString('hex');
  const { databaseUrl, schema } = await scratchDatabase(backend, 'toolgate-payments-bench-');
  const seeded = await seed({
    accounts: LOAD_KEYS,
    keysPerAccount: 1,
    databaseUrl,
    schema,
    keySecret,
    sample: LOAD_KEYS,
  });
  const start = async () =>
    backend === 'sqlite'
      ? startToolgateSqlite({ file: databaseUrl.slice('sqlite:'.length), keySecret })
      : startToolgatePostgres({
          url: databaseUrl,
          poolSize: 10,
          local: (await probe(databaseUrl)).local,
          existing: { schema: schema!, keySecret },
        });
  const off = await start();
  setToolgateEnv(PAYMENTS_ON);
  const on = await start().finally(() => setToolgateEnv({}));
  return { on, off, loadKeys: seeded.sample.map((s) => s.key) };
}

export const paymentsCost: Scenario = {
  id: 'payments',
  title: 'tool route with payments on vs off',
  description: `POST /api/v1/tools/get_billing, {} over ${LOAD_KEYS} keys, to toolgate with payments on (TOOLGATE_STRIPE_SECRET_KEY set) against the same without (one database)`,
  rotates: 'key',
  target: TARGET,
  peakRssMib: PEAK_RSS_MIB,
  async prepare(f) {
    const backend = f.toolgate.backend;
    let s = setups.get(backend);
    if (!s) {
      s = setUp(backend);
      setups.set(backend, s);
    }
    const set = await s;
    ready.set(backend, set);
    return {
      ...f,
      baseline: { name: 'toolgate, payments off', url: set.off.url, child: set.off.child },
      toolgate: set.on,
    };
  },
  requests(f) {
    const s = ready.get(f.toolgate.backend);
    if (!s) throw new Error('payments scenario: requests asked before prepare');
    return accountToolCalls(s.loadKeys, 'get_billing');
  },
  check(body) {
    const b = body as { status?: unknown; results?: { plan?: unknown } } | null;
    return b?.status === 'ok' && typeof b.results?.plan === 'string' ? null : 'not a get_billing answer';
  },
};
