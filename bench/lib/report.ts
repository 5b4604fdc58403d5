/** @module The results: a table for people (ratios against the baseline of the same run), JSON for tools. */
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { PEAK_RSS_MIB } from '../scenarios/scenario.js';
import { type Backend, type BenchOptions, redactUrl } from './args.js';
import { acrossBackends, targetCell, targetLine, targetNotices } from './goals.js';
import type { Ratio, ScenarioResult, SideResult } from './runner.js';
import type { ScaleResult } from './scale.js';
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
  /** The commit of the working tree measured (git HEAD, `+dirty` when it has changes), if known. */
  commit: string | null;
  /** The Node flags toolgate ran with: those of `npm start`. */
  toolgate_node_args: string[];
  /** --toolgate-env: settings on top of the bench's own. */
  toolgate_env: Record<string, string>;
  /** The load generator as run: `wrk 4.1.0 …, one thread`. */
  load_generator: string;
}

export interface PostgresInfo {
  /** Without the password. */
  url: string;
  version: string;
  /** The scratch schema of the scenarios (the scale comparison makes its own); null when none ran. */
  schema: string | null;
  poolSize: number;
  synchronousCommit: string;
  /** On this machine: it shares the cores with the bench and toolgate. */
  local: boolean;
}

const label = (r: ScenarioResult) => `${r.id} (${r.backend})`;
const scaleLabel = (r: ScaleResult) => `${r.id} (${r.backend})`;

/** What the warnings and notices look at: each measured pair of sides, with its notes. */
interface Measured {
  label: string;
  sides: SideResult[];
  notes: ScenarioResult['notes'];
}

function measured(results: readonly ScenarioResult[], scale: readonly ScaleResult[]): Measured[] {
  return [
    ...results.map((r) => ({ label: label(r), sides: [r.baseline, r.toolgate], notes: r.notes })),
    ...scale.map((r) => ({ label: scaleLabel(r), sides: [r.a, r.b], notes: r.notes })),
  ];
}

export function warnings(results: readonly ScenarioResult[], scale: readonly ScaleResult[] = []): string[] {
  const out: string[] = [];
  for (const r of measured(results, scale)) {
    for (const side of r.sides) {
      if (side.non2xx > 0) {
        const codes: Record<string, number> = {};
        for (const s of side.rounds)
          for (const [c, n] of Object.entries(s.statusCodes))
            if (!c.startsWith('2')) codes[c] = (codes[c] ?? 0) + n;
        out.push(
          `${r.label}: ${side.name} answered ${side.non2xx} non-2xx ${JSON.stringify(codes)}: its figures are not valid`,
        );
      }
      if (side.errors > 0)
        out.push(`${r.label}: ${side.name} had ${side.errors} connection errors (${side.timeouts} timeouts)`);
    }
    for (const n of r.notes) if (n.level === 'warning') out.push(`${r.label}: ${n.text}`);
  }
  return out;
}

/** Cores of CPU taken by other processes that make a scenario's figures noisy (see notices). */
export const NOISY_CORES = 0.25;

/**
 * Not failures, but worth a loud line: backends that were asked for (by default) but could not be
 * measured, and scenarios during whose rounds other processes took a good share of the CPU.
 */
export function notices(
  info: RunInfo,
  results: readonly ScenarioResult[] = [],
  scale: readonly ScaleResult[] = [],
): string[] {
  const out = info.skipped.map((s) => `${s.backend} was NOT measured: ${s.reason}`);
  out.push(...targetNotices(results));
  for (const r of measured(results, scale)) {
    const others = r.sides
      .flatMap((side) => side.rounds)
      .map((s) => s.cpu?.others)
      .filter((v): v is number => typeof v === 'number');
    const typical = median(others);
    if (typical > NOISY_CORES)
      out.push(
        `${r.label}: the rest of the machine (other processes, kernel threads) used ${typical.toFixed(2)} cores (median of rounds) of ${info.machine.cpus}: these figures are noisy`,
      );
  }
  return out;
}

export function table(
  info: RunInfo,
  results: readonly ScenarioResult[],
  scale: readonly ScaleResult[] = [],
): string {
  const { machine: m, opts } = info;
  const lines: string[] = [];
  lines.push(
    `toolgate bench: ${m.cpus} cpus (${m.cpu_model}), ${m.memory_gib} GiB, node ${m.node}, ${m.platform}, load average ${m.loadavg_1m} at start${info.commit ? `; toolgate at ${info.commit}` : ''}`,
    `toolgate runs as npm start runs it: node ${[...info.toolgate_node_args, 'dist/main.js'].join(' ')}${
      Object.keys(info.toolgate_env).length > 0
        ? `, with ${Object.entries(info.toolgate_env)
            .map(([k, v]) => `${k}=${k.endsWith('_URL') ? redactUrl(v) : v}`)
            .join(' ')}`
        : ''
    }; the baseline: node baseline-server.js${results.some((r) => r.id.startsWith('proxied')) ? ' (proxied: node proxy-baseline.js; both sides call node upstream.js)' : ''}`,
  );
  lines.push(
    `${opts.connections} connections, ${opts.rounds} rounds of ${opts.duration} s per side, ${opts.warmup} s warm-up per side, ${opts.accounts} accounts (one key each) rotated; toolgate's default per-key rate limit in play`,
    `load generator: ${info.load_generator}, on the same cores as the servers`,
  );
  const backends = [...new Set([...results, ...scale].map((r) => r.backend))];
  for (const backend of backends) lines.push(databaseLine(backend, info));
  lines.push(`${METHOD}.`);
  if (results.length > 0) {
    lines.push('');
    const rows: string[][] = [];
    let previous: string | null = null;
    for (const r of results) {
      const title = r.id === previous ? '' : r.title;
      previous = r.id;
      rows.push(sideRow(title, r.backend, r.baseline));
      rows.push(sideRow('', '', r.toolgate));
      rows.push(ratioRow(r.ratio, 'ratio', targetCell(r)));
    }
    lines.push(...grid(HEADER, rows));
    lines.push('');
    lines.push(
      'ratio: req/s below 1x means toolgate serves fewer; latency above 1x means toolgate is slower; by round:',
    );
    lines.push('the req/s ratio of each pair of rounds that ran back to back (their spread is the noise).');
    lines.push(
      'peak RSS: of the server process, over its warm-up and rounds in that scenario; busiest key: the most answers one rotated key (or account) got in one second.',
    );
    const ids = [...new Set(results.map((r) => r.id))];
    for (const id of ids) {
      const group = results.filter((r) => r.id === id);
      lines.push(`${group[0]!.title}: ${group[0]!.description}`);
      for (const r of group) {
        const goal = targetLine(r);
        if (goal) lines.push(`  ${r.backend}: ${goal}`);
      }
      for (const r of group)
        for (const n of r.notes) if (n.level === 'info') lines.push(`  ${r.backend}: ${n.text}`);
      const b = acrossBackends(results, id);
      if (b) {
        const goal =
          b.target === null ? '' : `; target req/s >= ${b.target.toFixed(2)}x: ${b.met ? 'met' : 'MISSED'}`;
        lines.push(
          `  postgres / sqlite (their ratios divided): req/s ${times(b.rps)}, p50 ${times(b.postgres.ratio.p50 / b.sqlite.ratio.p50)}, p99 ${times(b.postgres.ratio.p99 / b.sqlite.ratio.p99)}${goal}`,
        );
      }
    }
  }
  if (scale.length > 0) {
    const first = scale[0]!;
    lines.push('');
    lines.push(
      `scale: ${[...new Set(scale.map((r) => r.title))].join(' and ')} on ${thousands(first.small.accounts)} accounts against ${thousands(first.large.accounts)}, ${opts.keysPerAccount} keys per account and their fair-use rows, seeded by bench/seed.ts; ${first.rotated} keys rotated on each (one per account, spread over the whole id range)`,
    );
    lines.push('');
    const rows: string[][] = [];
    for (const r of scale) {
      rows.push(sideRow(r.id, r.backend, r.a));
      rows.push(sideRow('', '', r.b));
      rows.push(
        ratioRow(
          r.ratio,
          `ratio ${countName(r.large.accounts)}/${countName(r.small.accounts)}`,
          `req/s >= ${r.target.toFixed(2)}x ${r.ratio.rps >= r.target ? 'met' : 'MISSED'}; ${scalePeak(r)}`,
        ),
      );
    }
    lines.push(...grid(HEADER, rows));
    lines.push('');
    let seeded: string | null = null;
    for (const r of scale) {
      if (seeded !== r.backend)
        lines.push(
          `  ${r.backend}: seeded ${thousands(r.small.accounts)} accounts + ${thousands(r.small.keys)} keys in ${r.small.seedSeconds.toFixed(1)} s, ${thousands(r.large.accounts)} accounts + ${thousands(r.large.keys)} keys + ${thousands(r.large.fairUse.rows)} fair-use rows in ${r.large.seedSeconds.toFixed(1)} s`,
        );
      seeded = r.backend;
      for (const n of r.notes) if (n.level === 'info') lines.push(`  ${r.id} (${r.backend}): ${n.text}`);
    }
  }
  return lines.join('\n');
}

/** The memory target, judged on the large database's server (the small one's is shown beside it). */
function scalePeak(r: ScaleResult): string {
  const peak = r.b.memory.peakMib;
  const verdict = peak === null ? 'not measured' : peak <= PEAK_RSS_MIB ? 'met' : 'MISSED';
  return `peak RSS <= ${PEAK_RSS_MIB} MiB ${verdict}`;
}

const HEADER = [
  'scenario',
  'backend',
  'side',
  'req/s',
  'p50 ms',
  'p99 ms',
  'non-2xx',
  'errors',
  'peak RSS MiB',
  'busiest key/s',
  'req/s by round',
  'targets',
];
const RIGHT = new Set([3, 4, 5, 6, 7, 8, 9]);

function grid(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const render = (row: string[]) =>
    header
      .map((_, i) => {
        const cell = row[i] ?? '';
        return RIGHT.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
      })
      .join('  ')
      .trimEnd();
  return [render(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(render)];
}

function ratioRow(ratio: Ratio, name = 'ratio', target = ''): string[] {
  return [
    '',
    '',
    name,
    times(ratio.rps),
    times(ratio.p50),
    times(ratio.p99),
    '',
    '',
    '',
    '',
    ratio.rpsByRound.map(times).join(' '),
    target,
  ];
}

export const countName = (n: number) =>
  n >= 1_000_000 && n % 1_000_000 === 0
    ? `${n / 1_000_000}M`
    : n >= 1000 && n % 1000 === 0
      ? `${n / 1000}k`
      : String(n);

function databaseLine(backend: Backend, info: RunInfo): string {
  if (backend === 'sqlite')
    return `sqlite: a scratch database file in ${tmpdir()} (journal WAL, synchronous NORMAL, each write answered after an fdatasync of the WAL)`;
  const pg = info.postgres;
  if (!pg) return 'postgres: ?';
  return `postgres: PostgreSQL ${pg.version} at ${pg.url}${pg.local ? ' (on this machine: it shares the cores)' : ''}, scratch schema${pg.schema ? ` ${pg.schema}` : 's'}, pool ${pg.poolSize} connections, synchronous_commit ${pg.synchronousCommit}`;
}

function sideRow(title: string, backend: string, s: SideResult): string[] {
  const limiter = s.perKey.limiterMaxCount === null ? '' : ` (${s.perKey.limiterMaxCount}/${s.perKey.limit})`;
  return [
    title,
    backend,
    s.name,
    thousands(s.rps),
    s.p50.toFixed(2),
    s.p99.toFixed(2),
    String(s.non2xx),
    String(s.errors),
    s.memory.peakMib === null ? '?' : s.memory.peakMib.toFixed(1),
    `${s.perKey.maxPerSecond}${limiter}`,
    s.rounds.map((r) => thousands(r.rps)).join(' '),
  ];
}

const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}x` : 'n/a');

export function loudly(list: readonly string[], heading = 'WARNING: the figures above are suspect:'): string {
  const bar = '!'.repeat(78);
  return [bar, `!! ${heading}`, ...list.map((w) => `!!   ${w}`), bar].join('\n');
}
