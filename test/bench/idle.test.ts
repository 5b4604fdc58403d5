/**
 * The idle row (bench/lib/idle.ts, results.ts, doc-table.ts): a heap snapshot is summed by
 * constructor and by V8's node kinds, and a run's idle figures become an entry judged against the
 * idle target, with its split and the heap's largest parts said in the row.
 */
import { describe, expect, it } from 'vitest';
import { status, targetRows } from '../../bench/lib/doc-table.js';
import { IDLE_RSS_MIB, summarise } from '../../bench/lib/idle.js';
import type { RunJson } from '../../bench/lib/report-json.js';
import { entriesOf } from '../../bench/lib/results.js';

const MIB = 1048576;

describe('the idle row', () => {
  it('sums a heap snapshot by constructor for objects and by kind for the rest, largest first', () => {
    const heap = {
      snapshot: {
        meta: { node_fields: ['type', 'name', 'self_size'], node_types: [['code', 'object', 'string']] },
      },
      strings: ['Foo', 'Bar', 'x'],
      // type, name, self_size
      nodes: [1, 0, 2 * MIB, 1, 0, MIB, 0, 2, 4 * MIB, 1, 1, MIB, 2, 2, MIB / 2],
    };
    const { totalMib, top } = summarise(heap as Parameters<typeof summarise>[0]);
    expect(totalMib).toBe(8.5);
    expect(top).toEqual([
      { name: '(code)', mib: 4, count: 1 },
      { name: 'Foo', mib: 3, count: 2 },
      { name: 'Bar', mib: 1, count: 1 },
      { name: '(string)', mib: 0.5, count: 1 },
    ]);
  });

  it('becomes an entry judged against the idle target, its figures said in the row', () => {
    const idle = (rss: number) =>
      ({
        generated_at: '2026-01-01T00:00:00Z',
        commit: 'abc',
        machine: { cpus: 2, cpu_model: 'test cpu', node: 'v20' },
        options: { rounds: 2, duration: 3, warmup: 3, connections: 50, accounts: 1000 },
        scenarios: [],
        scale: [],
        warnings: [],
        idle: {
          waited_s: 16,
          target_rss_mib: IDLE_RSS_MIB,
          target_met: rss <= IDLE_RSS_MIB,
          toolgate: { rss_mib: rss, anon_mib: 40, file_mib: 30 },
          baseline: { rss_mib: 57, anon_mib: 20, file_mib: 30 },
          memory_usage_mib: { heapUsed: 19 },
          heap_snapshot: { total_mib: 19, top: [{ name: '(code)', mib: 4, count: 10 }] },
        },
      }) as unknown as RunJson;
    const row = targetRows([], ['sqlite']).find((t) => t.id === 'idle')!;
    const [met] = entriesOf(idle(84)).entries;
    expect(status(row, met)).toMatch(
      /^met; idle RSS 84.0 MiB \(anonymous 40.0, file-backed 30.0; bare Fastify 57.0\); heap snapshot 19.0 MiB, largest \(code\) 4.0/,
    );
    const [missed] = entriesOf(idle(120)).entries;
    expect(status(row, missed)).toMatch(/^\*\*missed\*\*: idle RSS/);
  });
});
