/** @module The results: a table for people (ratios against the baseline of the same run), JSON for tools. */
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { type Backend, type BenchOptions, redactUrl } from './args.js';
import type { ScenarioResult, SideResult } from './runner.js';
import { median } from './stats.js';

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

/** What the run measured, beside the results: the machine, the options, each database. */
export interface RunInfo {
  machine: Machine;
  opts: BenchOptions;
  /** The PostgreSQL toolgate ran on, when it was measured. */
  postgres: PostgresInfo | null;
  /** Backends asked for but not measured, each with the reason (a loud notice in the report). */
  skipped: { backend: Backend; reason: string }[];
}

export interface PostgresInfo {
  /** Without the password. */
  url: string;
  version: string;
  schema: string;
  poolSize: number;
  synchronousCommit: string;
  /** On this machine: it shares the cores with the bench and toolgate. */
  local: boolean;
}

const label = (r: ScenarioResult) => `${r.id} (${r.backend})`;

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
          `${label(r)}: ${side.name} answered ${side.non2xx} non-2xx ${JSON.stringify(codes)}: its figures are not valid`,
        );
      }
      if (side.errors > 0)
        out.push(
          `${label(r)}: ${side.name} had ${side.errors} connection errors (${side.timeouts} timeouts)`,
        );
    }
    for (const n of r.notes) if (n.level === 'warning') out.push(`${label(r)}: ${n.text}`);
  }
  return out;
}

/** Cores of CPU taken by other processes that make a scenario's figures noisy (see notices). */
export const NOISY_CORES = 0.25;

/**
 * Not failures, but worth a loud line: backends that were asked for (by default) but could not be
 * measured, and scenarios during whose rounds other processes took a good share of the CPU.
 */
export function notices(info: RunInfo, results: readonly ScenarioResult[] = []): string[] {
  const out = info.skipped.map((s) => `${s.backend} was NOT measured: ${s.reason}`);
  for (const r of results) {
    const others = [...r.baseline.rounds, ...r.toolgate.rounds]
      .map((s) => s.cpu?.others)
      .filter((v): v is number => typeof v === 'number');
    const typical = median(others);
    if (typical > NOISY_CORES)
      out.push(
        `${label(r)}: the rest of the machine (other processes, kernel threads) used ${typical.toFixed(2)} cores (median of rounds) of ${info.machine.cpus}: these figures are noisy`,
      );
  }
  return out;
}

export function table(info: RunInfo, results: readonly ScenarioResult[]): string {
  const { machine: m, opts } = info;
  const lines: string[] = [];
  lines.push(
    `toolgate bench: ${m.cpus} cpus (${m.cpu_model}), ${m.memory_gib} GiB, node ${m.node}, ${m.platform}, load average ${m.loadavg_1m} at start`,
  );
  lines.push(
    `${opts.connections} connections, ${opts.rounds} rounds of ${opts.duration} s per side, ${opts.warmup} s warm-up per side, ${opts.accounts} accounts`,
  );
  const measured = [...new Set(results.map((r) => r.backend))];
  for (const backend of measured) lines.push(databaseLine(backend, info));
  lines.push(`${METHOD}.`);
  lines.push('');
  const header = [
    'scenario',
    'backend',
    'side',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'errors',
    'req/s by round',
  ];
  const rows: string[][] = [header];
  let previous: string | null = null;
  for (const r of results) {
    const title = r.id === previous ? '' : r.title;
    previous = r.id;
    rows.push(sideRow(title, r.backend, r.baseline));
    rows.push(sideRow('', '', r.toolgate));
    rows.push([
      '',
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
  const right = new Set([3, 4, 5, 6, 7]);
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
  const ids = [...new Set(results.map((r) => r.id))];
  for (const id of ids) {
    const group = results.filter((r) => r.id === id);
    lines.push(`${group[0]!.title}: ${group[0]!.description}`);
    for (const r of group)
      for (const n of r.notes) if (n.level === 'info') lines.push(`  ${r.backend}: ${n.text}`);
    const sqlite = group.find((r) => r.backend === 'sqlite');
    const postgres = group.find((r) => r.backend === 'postgres');
    if (sqlite && postgres)
      lines.push(
        `  postgres / sqlite (their ratios divided): req/s ${times(postgres.ratio.rps / sqlite.ratio.rps)}, p50 ${times(postgres.ratio.p50 / sqlite.ratio.p50)}, p99 ${times(postgres.ratio.p99 / sqlite.ratio.p99)}`,
      );
  }
  return lines.join('\n');
}

function databaseLine(backend: Backend, info: RunInfo): string {
  if (backend === 'sqlite')
    return `sqlite: a scratch database file in ${tmpdir()} (journal WAL, synchronous FULL)`;
  const pg = info.postgres;
  if (!pg) return 'postgres: ?';
  return `postgres: PostgreSQL ${pg.version} at ${pg.url}${pg.local ? ' (on this machine: it shares the cores)' : ''}, scratch schema ${pg.schema}, pool ${pg.poolSize} connections, synchronous_commit ${pg.synchronousCommit}`;
}

function sideRow(title: string, backend: string, s: SideResult): string[] {
  return [
    title,
    backend,
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

export function loudly(list: readonly string[], heading = 'WARNING: the figures above are suspect:'): string {
  const bar = '!'.repeat(78);
  return [bar, `!! ${heading}`, ...list.map((w) => `!!   ${w}`), bar].join('\n');
}

export function json(info: RunInfo, results: readonly ScenarioResult[]) {
  const { machine: m, opts } = info;
  const round3 = (x: number | null | undefined) =>
    x !== null && x !== undefined && Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null;
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
      cpu_cores: r.cpu
        ? {
            server: round3(r.cpu.server),
            load_generator: round3(r.cpu.loadgen),
            postgres_backends: round3(r.cpu.database),
            other_processes: round3(r.cpu.others),
          }
        : null,
    })),
  });
  return {
    generated_at: new Date().toISOString(),
    machine: { ...m, loadavg_1m_at_end: Math.round((loadavg()[0] ?? 0) * 100) / 100 },
    options: { ...opts, postgresUrl: redactUrl(opts.postgresUrl) },
    method: METHOD,
    postgres: info.postgres,
    skipped_backends: info.skipped,
    scenarios: results.map((r) => ({
      id: r.id,
      backend: r.backend,
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
    notices: notices(info, results),
  };
}
