/** @module The results: a table for people (ratios against the baseline of the same run), JSON for tools. */
import { cpus, loadavg, totalmem } from 'node:os';
import type { BenchOptions } from './args.js';
import type { ScenarioResult, SideResult } from './runner.js';

export interface Machine {
  cpus: number;
  cpu_model: string;
  memory_gib: number;
  node: string;
  platform: string;
  /** 1-minute load average when the bench started (the load generator shares the machine). */
  loadavg_1m: number;
}

export function machine(): Machine {
  const list = cpus();
  return {
    cpus: list.length,
    cpu_model: list[0]?.model.trim() ?? 'unknown',
    memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadavg_1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

export const METHOD =
  'baseline and toolgate measured alternately, in ABBA order; each figure is the median of the rounds of its side; ratio = toolgate / baseline';

export function warnings(results: readonly ScenarioResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    for (const side of [r.baseline, r.toolgate]) {
      if (side.non2xx > 0) {
        const codes: Record<string, number> = {};
        for (const s of side.rounds)
          for (const [c, n] of Object.entries(s.statusCodes))
            if (!c.startsWith('2')) codes[c] = (codes[c] ?? 0) + n;
        out.push(
          `${r.id}: ${side.name} answered ${side.non2xx} non-2xx ${JSON.stringify(codes)}: its figures are not valid`,
        );
      }
      if (side.errors > 0)
        out.push(`${r.id}: ${side.name} had ${side.errors} connection errors (${side.timeouts} timeouts)`);
    }
    for (const n of r.notes) if (n.level === 'warning') out.push(`${r.id}: ${n.text}`);
  }
  return out;
}

export function table(m: Machine, opts: BenchOptions, results: readonly ScenarioResult[]): string {
  const lines: string[] = [];
  lines.push(
    `toolgate bench: ${m.cpus} cpus (${m.cpu_model}), ${m.memory_gib} GiB, node ${m.node}, ${m.platform}, load average ${m.loadavg_1m} at start`,
  );
  lines.push(
    `${opts.connections} connections, ${opts.rounds} rounds of ${opts.duration} s per side, ${opts.warmup} s warm-up per side, ${opts.accounts} accounts`,
  );
  lines.push(`${METHOD}.`);
  lines.push('');
  const header = ['scenario', 'side', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'req/s by round'];
  const rows: string[][] = [header];
  for (const r of results) {
    rows.push(sideRow(r.title, r.baseline));
    rows.push(sideRow('', r.toolgate));
    rows.push([
      '',
      'ratio',
      times(r.ratio.rps),
      times(r.ratio.p50),
      times(r.ratio.p99),
      '',
      '',
      r.ratio.rpsByRound.map(times).join(' '),
    ]);
  }
  const right = new Set([2, 3, 4, 5, 6]);
  const widths = header.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const render = (row: string[]) =>
    row
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  lines.push(render(header));
  lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows.slice(1)) lines.push(render(row));
  lines.push('');
  lines.push(
    'ratio: req/s below 1x means toolgate serves fewer; latency above 1x means toolgate is slower; by round:',
  );
  lines.push('the req/s ratio of each pair of rounds that ran back to back (their spread is the noise).');
  for (const r of results) {
    lines.push(`${r.title}: ${r.description}`);
    for (const n of r.notes) if (n.level === 'info') lines.push(`  ${n.text}`);
  }
  return lines.join('\n');
}

function sideRow(title: string, s: SideResult): string[] {
  return [
    title,
    s.name,
    thousands(s.rps),
    s.p50.toFixed(2),
    s.p99.toFixed(2),
    String(s.non2xx),
    String(s.errors),
    s.rounds.map((r) => thousands(r.rps)).join(' '),
  ];
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : 'n/a');

export function loudly(list: readonly string[]): string {
  const bar = '!'.repeat(78);
  return [bar, '!! WARNING: the figures above are suspect:', ...list.map((w) => `!!   ${w}`), bar].join('\n');
}

export function json(m: Machine, opts: BenchOptions, results: readonly ScenarioResult[]) {
  const round3 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null);
  const side = (s: SideResult) => ({
    name: s.name,
    rps: round3(s.rps),
    p50_ms: round3(s.p50),
    p99_ms: round3(s.p99),
    non_2xx: s.non2xx,
    errors: s.errors,
    timeouts: s.timeouts,
    rounds: s.rounds.map((r) => ({
      rps: round3(r.rps),
      p50_ms: round3(r.p50),
      p99_ms: round3(r.p99),
      mean_ms: round3(r.mean),
      responses: r.total,
      status_codes: r.statusCodes,
      errors: r.errors,
      seconds: r.seconds,
    })),
  });
  return {
    generated_at: new Date().toISOString(),
    machine: { ...m, loadavg_1m_at_end: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
    options: opts,
    method: METHOD,
    scenarios: results.map((r) => ({
      id: r.id,
      title: r.title,
      description: r.description,
      baseline: side(r.baseline),
      toolgate: side(r.toolgate),
      ratio: {
        rps: round3(r.ratio.rps),
        p50: round3(r.ratio.p50),
        p99: round3(r.ratio.p99),
        rps_by_round: r.ratio.rpsByRound.map(round3),
      },
      notes: r.notes,
    })),
    warnings: warnings(results),
  };
}
