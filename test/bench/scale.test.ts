/**
 * The scale comparison's rows (bench/scenarios/scale.ts, bench/lib/results.ts, bench/lib/doc-table.ts):
 * get_account and the metered call each have their entry in the figures file and their row on both
 * backends, held to 0.90x, and a warning about one keeps out that one only.
 */
import { describe, expect, it } from 'vitest';
import { status, targetRows } from '../../bench/lib/doc-table.js';
import type { RunJson } from '../../bench/lib/report-json.js';
import { entriesOf } from '../../bench/lib/results.js';
import { shuffledSlots } from '../../bench/lib/scale.js';
import { ioLine, statioLine } from '../../bench/lib/scale-probes.js';
import { SCALE_CALLS, SCALE_GET_ACCOUNT, SCALE_METERED } from '../../bench/scenarios/scale.js';

const side = (rps: number) => ({
  rps,
  p99_ms: 5,
  cpu_us_per_request: 1e6 / rps,
  peak_rss_mib: 150,
  rounds: [{ cpu_cores: { other_processes: 0.1 } }],
});

/** A run's JSON with only its scale comparisons, as lib/results.ts reads them. */
function run(warnings: string[] = []): RunJson {
  const database = (accounts: number) => ({ accounts, keys: accounts * 3 });
  return {
    generated_at: '2000-01-01T00:00:00Z',
    commit: 'abc',
    machine: { cpus: 2, cpu_model: 'test cpu', node: 'v20' },
    options: { rounds: 3, duration: 4, warmup: 6, connections: 50, accounts: 1000 },
    scenarios: [],
    scale: SCALE_CALLS.flatMap((call) =>
      (['sqlite', 'postgres'] as const).map((backend) => ({
        id: call.id,
        title: call.title,
        backend,
        small: database(1000),
        large: database(1_000_000),
        small_side: side(10_000),
        large_side: side(9_500),
        ratio_large_to_small: { rps: 0.95, rps_by_round: [0.95] },
      })),
    ),
    warnings,
  } as unknown as RunJson;
}

describe('the scale comparison', () => {
  it('compares get_account and the metered catalogue tool, each held to 0.90x', () => {
    expect(SCALE_CALLS.map((c) => [c.id, c.target, c.upstream])).toEqual([
      ['scale', 0.9, false],
      ['scale_metered', 0.9, true],
    ]);
    expect(SCALE_METERED.request('tg_x').path).toBe('/api/v1/tools/bench_search');
    expect(SCALE_GET_ACCOUNT.check({ status: 'ok', results: { id: 'acc_1' } }, 'acc_1')).toBeNull();
    const answer = {
      status: 'ok',
      results: Array.from({ length: 10 }, (_, i) => ({ i })),
      metadata: { fair_use: {}, tokens_charged: 0 },
    };
    expect(SCALE_METERED.check(answer, 'acc_1')).toBeNull();
    expect(SCALE_METERED.check({ ...answer, metadata: { tokens_charged: 0 } }, 'acc_1')).toMatch(/fair_use/);
  });

  it("has an entry per call and backend, named with the run's sizes; a warning keeps out only its own", () => {
    const { entries, suspect } = entriesOf(run(['scale_metered (postgres): toolgate answered 2 non-2xx']));
    expect(entries.map((e) => [e.id, e.backend, e.title, e.rps.ratio])).toEqual([
      ['scale', 'sqlite', 'get_account, 1M accounts against 1k', 0.95],
      ['scale', 'postgres', 'get_account, 1M accounts against 1k', 0.95],
      ['scale_metered', 'sqlite', 'metered call, 1M accounts against 1k', 0.95],
    ]);
    expect(entries[0]?.rps.baseline).toBe(10_000);
    expect(suspect).toEqual(['scale_metered (postgres)']);
  });

  it('has a row per call on each backend in the targets table, judged on req/s', () => {
    const rows = targetRows([], ['sqlite', 'postgres']).filter((r) => r.id.startsWith('scale'));
    expect(rows.map((r) => [r.id, r.backend, r.rps])).toEqual([
      ['scale', 'sqlite', 0.9],
      ['scale', 'postgres', 0.9],
      ['scale_metered', 'sqlite', 0.9],
      ['scale_metered', 'postgres', 0.9],
    ]);
    const entry = entriesOf(run()).entries[2]!;
    expect(status(rows[2]!, entry)).toBe('met');
    expect(status(rows[2]!, { ...entry, rps: { ...entry.rps, ratio: 0.85 } })).toBe('**missed**: req/s');
  });

  it('sends the keys of both sides in one shuffled order, every key once', () => {
    const order = shuffledSlots(1000);
    expect([...order].sort((x, y) => x - y)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(order).toEqual(shuffledSlots(1000));
    // Neighbours in id order are not neighbours in the load.
    const adjacent = order.filter((slot, i) => i > 0 && Math.abs(slot - order[i - 1]!) === 1).length;
    expect(adjacent).toBeLessThan(20);
  });

  it('says what each side read and wrote per answer, on the event loop and on the other threads', () => {
    const io = (n: number) => ({ rchar: n, wchar: 2 * n, syscr: n, syscw: n, read_bytes: 0, write_bytes: n });
    const at = (loop: number, all: number) => ({ loop: io(loop), all: io(all) });
    expect(ioLine(at(0, 0), at(1024, 3072), 1024)).toBe(
      'event loop read() 1.00 calls 0.00 KB, write() 1.00 calls 0.00 KB; other threads read() 2.00 calls 0.00 KB, write() 2.00 calls 0.00 KB; to disk 0.00 KB, from disk 0.00 KB',
    );
    expect(ioLine(null, at(1, 1), 1)).toBe('?');
    const statio = (hit: number, read: number, updates: number, hot: number) => ({
      heapHit: hit,
      heapRead: read,
      indexHit: hit,
      indexRead: 0,
      updates,
      hotUpdates: hot,
    });
    expect(statioLine(statio(0, 0, 0, 0), statio(300, 2, 100, 25), 100)).toBe(
      'buffers per answer: heap 3.00 hit + 0.02 read, indexes 3.00 hit + 0.00 read (99.67% hits); row updates 1.00 per answer, 25.0% HOT',
    );
  });
});
