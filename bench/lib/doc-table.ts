/**
 * @module The targets table of docs/performance.md, made from bench/results/latest.json: one row per
 * scenario and backend with its targets (the scenarios' own, judged again on the recorded figures),
 * written between two marker comments so that a new run changes the figures and no prose.
 */
import { METERS_COST_ID, METERS_COST_TARGET, METERS_COST_TITLE } from '../scenarios/meters-cost.js';
import { SCALE_CALLS } from '../scenarios/scale.js';
import { PEAK_RSS_MIB, type Scenario } from '../scenarios/scenario.js';
import { type Backend, IDLE } from './args.js';
import { targetOn } from './goals.js';
import { IDLE_RSS_MIB } from './idle.js';
import { NOISY_CORES } from './report.js';
import type { LatestEntry, LatestFile } from './results.js';

export const START = '<!-- targets:start -->';
const SCALE_IDS = new Set(SCALE_CALLS.map((c) => c.id));
export const END = '<!-- targets:end -->';

/** What a row is held to; a row with none is shown, not judged. */
export interface TargetRow {
  id: string;
  backend: Backend;
  /** The scenario as the table names it. */
  title: string;
  /** toolgate / baseline req/s at least. */
  rps?: number;
  /** A higher req/s ratio aimed for; not reaching it is no miss. */
  stretch?: number;
  /** toolgate's p99 at most, ms. */
  p99Ms?: number;
  /** toolgate's peak RSS at most, MiB. */
  peakRssMib?: number;
  /** The PostgreSQL ratio over the SQLite one of the same run, at least. */
  toSqlite?: number;
  /** toolgate's RSS at rest after start, at most, MiB (the idle row). */
  idleRssMib?: number;
}

/**
 * The rows: every scenario on every backend, in the order they run, held to the scenarios' targets
 * as they are now; then the scale comparison's calls (the small database as the baseline side).
 */
export function targetRows(scenarios: readonly Scenario[], backends: readonly Backend[]): TargetRow[] {
  const rows: TargetRow[] = [];
  for (const s of scenarios)
    for (const backend of backends) {
      const rps = targetOn(s, backend);
      rows.push({
        id: s.id,
        backend,
        // The id is what --only takes; said once when the title is the id.
        title: s.title === s.id ? `\`${s.id}\`` : `${s.title} \`${s.id}\``,
        ...(rps === null ? {} : { rps }),
        ...(rps !== null && s.stretch !== undefined ? { stretch: s.stretch } : {}),
        ...(s.p99Ms === undefined ? {} : { p99Ms: s.p99Ms }),
        ...(s.peakRssMib === undefined ? {} : { peakRssMib: s.peakRssMib }),
        ...(backend === 'postgres' && s.postgresTarget !== undefined ? { toSqlite: s.postgresTarget } : {}),
      });
    }
  for (const backend of backends)
    rows.push({
      id: METERS_COST_ID,
      backend,
      title: `${METERS_COST_TITLE} \`${METERS_COST_ID}\``,
      rps: METERS_COST_TARGET,
    });
  for (const call of SCALE_CALLS)
    for (const backend of backends)
      rows.push({
        id: call.id,
        backend,
        title: `${call.title}, 1M accounts against 1k \`${call.id}\``,
        rps: call.target,
        peakRssMib: PEAK_RSS_MIB,
      });
  rows.push({
    id: IDLE,
    backend: 'sqlite',
    title: `idle, after start \`${IDLE}\``,
    idleRssMib: IDLE_RSS_MIB,
  });
  return rows;
}

const BACKEND: Record<Backend, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

const x = (n: number | null | undefined) => (typeof n === 'number' ? `${n.toFixed(2)}x` : '?');
const fixed = (n: number | null | undefined, digits: number) =>
  typeof n === 'number' ? n.toFixed(digits) : '?';

function targetsCell(t: TargetRow): string {
  const out: string[] = [];
  if (t.rps !== undefined)
    out.push(`req/s >= ${x(t.rps)}${t.stretch === undefined ? '' : ` (stretch ${x(t.stretch)})`}`);
  if (t.toSqlite !== undefined) out.push(`PostgreSQL / SQLite >= ${x(t.toSqlite)}`);
  if (t.p99Ms !== undefined) out.push(`p99 <= ${t.p99Ms} ms`);
  if (t.peakRssMib !== undefined) out.push(`peak RSS <= ${t.peakRssMib} MiB`);
  if (t.idleRssMib !== undefined) out.push(`idle RSS <= ${t.idleRssMib} MiB`);
  return out.length === 0 ? 'none (shown)' : out.join('; ');
}

/** Each target of the row against the entry's figures: missed ones named, the stretch and the cross-backend figure said. */
export function status(t: TargetRow, e: LatestEntry | undefined): string {
  if (!e) return 'not measured';
  const missed: string[] = [];
  const unknown: string[] = [];
  const check = (goal: string, value: number | null | undefined, ok: (v: number) => boolean) => {
    if (typeof value !== 'number') unknown.push(goal);
    else if (!ok(value)) missed.push(goal);
  };
  if (t.rps !== undefined) check('req/s', e.rps.ratio, (v) => v >= t.rps!);
  if (t.toSqlite !== undefined) check('PostgreSQL / SQLite', e.rps_ratio_to_sqlite, (v) => v >= t.toSqlite!);
  if (t.p99Ms !== undefined) check('p99', e.p99_ms.toolgate, (v) => v <= t.p99Ms!);
  if (t.peakRssMib !== undefined) check('peak RSS', e.peak_rss_mib.toolgate, (v) => v <= t.peakRssMib!);
  if (t.idleRssMib !== undefined) check('idle RSS', e.idle?.toolgate.rss_mib, (v) => v <= t.idleRssMib!);
  const judged = [t.rps, t.toSqlite, t.p99Ms, t.peakRssMib, t.idleRssMib].some((v) => v !== undefined);
  const parts = [
    !judged ? 'shown' : missed.length > 0 ? `**missed**: ${missed.join(', ')}` : 'met',
    ...(unknown.length > 0 ? [`not measured: ${unknown.join(', ')}`] : []),
  ];
  if (t.stretch !== undefined && typeof e.rps.ratio === 'number')
    parts.push(`stretch ${e.rps.ratio >= t.stretch ? 'reached' : 'not reached'}`);
  if (t.toSqlite !== undefined && typeof e.rps_ratio_to_sqlite === 'number')
    parts.push(`PostgreSQL / SQLite ${x(e.rps_ratio_to_sqlite)}`);
  // The figures are the latest, not necessarily good ones: say when other work shared the cores.
  if (typeof e.other_cores === 'number' && e.other_cores > NOISY_CORES)
    parts.push(`noisy (other processes ${e.other_cores.toFixed(2)} cores)`);
  if (e.idle) parts.push(idleSaid(e.idle));
  return parts.join('; ');
}

/** The idle row's figures, in words: the RSS and its split, the baseline's, the heap's largest parts. */
function idleSaid(idle: NonNullable<LatestEntry['idle']>): string {
  const t = idle.toolgate;
  const heap = idle.heap_snapshot;
  const largest = heap ? heap.top.slice(0, 3).map((p) => `${p.name} ${fixed(p.mib, 1)}`) : [];
  return [
    `idle RSS ${fixed(t.rss_mib, 1)} MiB (anonymous ${fixed(t.anon_mib, 1)}, file-backed ${fixed(t.file_mib, 1)}; bare Fastify ${fixed(idle.baseline.rss_mib, 1)})`,
    ...(heap ? [`heap snapshot ${fixed(heap.total_mib, 1)} MiB, largest ${largest.join(', ')}`] : []),
  ].join('; ');
}

function row(t: TargetRow, e: LatestEntry | undefined, title: string): string {
  const cells = e?.idle
    ? ['', '', '', '', '', `at rest ${e.run.duration_s} s`]
    : e
      ? [
          x(e.rps.ratio),
          e.rps.ratio_by_round.map((r) => fixed(r, 2)).join(' '),
          `${fixed(e.cpu_us_per_request.toolgate, 0)} / ${fixed(e.cpu_us_per_request.baseline, 0)}`,
          `${fixed(e.p99_ms.toolgate, 1)} / ${fixed(e.p99_ms.baseline, 1)}`,
          fixed(e.peak_rss_mib.toolgate, 1),
          `${e.run.rounds} × ${e.run.duration_s} s`,
        ]
      : ['', '', '', '', '', ''];
  return `| ${[title, BACKEND[t.backend], targetsCell(t), ...cells, status(t, e)].join(' | ')} |`;
}

/** The table, a line on the machine(s) it was measured on, and nothing else (the markers' content). */
export function targetsTable(rows: readonly TargetRow[], latest: LatestFile): string {
  const find = (t: TargetRow) => latest.entries.find((e) => e.id === t.id && e.backend === t.backend);
  const lines = [
    '| scenario | backend | targets | req/s ratio | by round | CPU µs a request, toolgate / baseline | p99 ms, toolgate / baseline | toolgate peak RSS MiB | rounds | status |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  let previous: string | null = null;
  for (const t of rows) {
    const e = find(t);
    // The scale comparison's sizes are the run's (--scale-base, --scale-accounts).
    const title = SCALE_IDS.has(t.id) && e ? `${e.title} \`${t.id}\`` : t.title;
    lines.push(row(t, e, t.id === previous ? '' : title));
    previous = t.id;
  }
  const machines = new Set(
    rows
      .map(find)
      .filter((e): e is LatestEntry => e !== undefined)
      .map((e) => `${e.machine.cpus} vCPUs (${e.machine.cpu_model}), Node ${e.machine.node}`),
  );
  lines.push('');
  lines.push(
    machines.size === 0
      ? 'No figures recorded yet: run `npm run bench`.'
      : `Measured on ${[...machines].join('; ')}; each row from the latest run that measured it.`,
  );
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by `content`; an error when the markers are missing. */
export function replaceBetweenMarkers(doc: string, content: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the document has no ${START} ... ${END} section`);
  return `${doc.slice(0, start + START.length)}\n${content}\n${doc.slice(end)}`;
}
