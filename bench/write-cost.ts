/**
 * @module What a consumption's write costs, in process, on SQLite: metered and charged consumptions
 * (one request and ten records, ten tokens for a charge) through the usage store as a server has it
 * (read cache, group commit, the writer thread or not), 200 at a time over 1,000 accounts drawn at
 * random, rounds alternated. Per consumption: CPU of the event loop's thread and of the whole
 * process (every thread: the writer, the fdatasyncs), WAL frames written, and fdatasyncs. No HTTP:
 * what the store adds to a call, apart from the request's own path.
 * `node .bench/bench/write-cost.js [--accounts 1000] [--batch 200] [--batches 30] [--rounds 4]`
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../src/domain/clock.js';
import { incrementsFor } from '../src/domain/fair-use.js';
import { newId } from '../src/domain/ids.js';
import { DEFAULT_PLANS, type PlanLimits } from '../src/domain/plans.js';
import { createServices } from '../src/service/index.js';
import { withReadCache } from '../src/store/cached-reads.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { UsageCommit } from '../src/store/store.js';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string' },
    batch: { type: 'string' },
    batches: { type: 'string' },
    rounds: { type: 'string' },
  },
});
const ACCOUNTS = Number(values.accounts ?? 1000);
const BATCH = Number(values.batch ?? 200);
const BATCHES = Number(values.batches ?? 30);
const ROUNDS = Number(values.rounds ?? 4);
const ROOM = 1_000_000_000;
const LIMITS: PlanLimits = {
  search: { records: { '5h': ROOM, '1w': ROOM }, requests: { '5h': ROOM } },
};

type Kind = 'metered' | 'charged';
type Mode = 'loop' | 'thread';

/** CPU seconds of one thread of this process, from /proc (the event loop's: the process id's task). */
function threadCpu(tid: number): number {
  const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Figures {
  loopUs: number;
  processUs: number;
  frames: number;
  syncs: number;
}

async function open(mode: Mode) {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-write-cost-'));
  const path = join(dir, 't.db');
  const { store, reads } = withReadCache(
    (observer) =>
      new SqliteStore({ path, observer, backgroundCheckpoints: true, writerThread: mode === 'thread' }),
  );
  await store.migrate(DEFAULT_PLANS, Math.floor(Date.now() / 1000));
  const services = createServices({
    store,
    reads,
    clock: systemClock,
    keyPrefix: 'tg',
    keySecret: 'write-cost-key-secret-0123456789abcdef0123',
  });
  const put = await services.plans.put('bench', { limits: LIMITS });
  if (!put.ok) throw new Error(put.error.message);
  const accounts: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const a = await services.accounts.create({ name: `a${i}`, plan: 'bench' });
    if (!a.ok) throw new Error(a.error.message);
    const granted = await services.tokens.apply(
      a.value.id,
      { kind: 'grant', amount: ROOM },
      { actor: 'bench' },
    );
    if (!granted.ok) throw new Error(granted.error.message);
    accounts.push(a.value.id);
  }
  // Every account in the read cache, as a server's traffic leaves it.
  for (const id of accounts) await reads.getSnapshot(id);
  return {
    store,
    accounts,
    path,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function commitOf(accountId: string, kind: Kind): UsageCommit {
  const now = Math.floor(Date.now() / 1000);
  const c: UsageCommit = {
    accountId,
    increments: incrementsFor(LIMITS, 'search', { records: 10, requests: 1 }),
    now,
    render: (_windows, balance) => ({ balance }),
  };
  if (kind === 'charged')
    c.charge = { entryId: newId('led', Date.now()), amount: 10, reason: 'bench_charged' };
  return c;
}

async function round(side: Awaited<ReturnType<typeof open>>, kind: Kind, seed: number): Promise<Figures> {
  let x = seed | 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const wal = `${side.path}-wal`;
  const framesBefore = statSync(wal).size;
  const syncsBefore = side.store.walSyncs + (side.store.writer?.committed ?? 0);
  const loop0 = threadCpu(process.pid);
  const cpu0 = process.cpuUsage();
  for (let b = 0; b < BATCHES; b++) {
    const batch = Array.from({ length: BATCH }, () =>
      commitOf(side.accounts[Math.floor(next() * side.accounts.length)]!, kind),
    );
    const outcomes = await Promise.all(batch.map((c) => side.store.usage.commit(c)));
    if (outcomes.some((o) => o.kind !== 'committed')) throw new Error('a consumption was refused');
  }
  const cpu = process.cpuUsage(cpu0);
  const n = BATCHES * BATCH;
  return {
    loopUs: ((threadCpu(process.pid) - loop0) * 1e6) / n,
    processUs: (cpu.user + cpu.system) / n,
    // The WAL is reused from its start after a checkpoint: growth is a lower bound, shown as such.
    frames: Math.max(0, statSync(wal).size - framesBefore) / 4120 / n,
    syncs: (side.store.walSyncs + (side.store.writer?.committed ?? 0) - syncsBefore) / n,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const sides = { loop: await open('loop'), thread: await open('thread') };
try {
  const results: Record<string, Figures[]> = {};
  for (const kind of ['metered', 'charged'] as const) {
    for (const mode of ['loop', 'thread'] as const) await round(sides[mode], kind, 1); // warm-up
    for (let r = 0; r < ROUNDS; r++) {
      const order: Mode[] = r % 2 === 0 ? ['loop', 'thread'] : ['thread', 'loop'];
      for (const mode of order) {
        const key = `${kind} ${mode}`;
        results[key] ??= [];
        results[key].push(await round(sides[mode], kind, r + 2));
      }
    }
  }
  process.stdout.write(
    `a consumption's write, ${ACCOUNTS} accounts, ${BATCHES} x ${BATCH} at a time, ${ROUNDS} rounds (median):\n`,
  );
  for (const [name, rows] of Object.entries(results)) {
    const pick = (f: keyof Figures) => median(rows.map((row) => row[f]));
    process.stdout.write(
      `  ${name.padEnd(16)} event loop ${pick('loopUs').toFixed(1).padStart(5)} µs  process ${pick('processUs').toFixed(1).padStart(5)} µs  WAL frames >= ${pick('frames').toFixed(2)}  batches durable ${pick('syncs').toFixed(3)}\n`,
    );
  }
} finally {
  await sides.loop.close();
  await sides.thread.close();
}
