/**
 * @module The figures the docs are made from: bench/results/latest.json holds, for each scenario and
 * backend, the figures of the latest sound run that measured it. A run merges its results into the
 * file by scenario and backend, so a partial run (`--only`) keeps every other figure; each entry
 * keeps when and at which commit it was measured (the docs' table does not show that).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Backend, IDLE } from './args.js';
import { countName } from './report.js';
import type { RunJson } from './report-json.js';
import { median } from './stats.js';

export interface Pair {
  /** The reference side: the baseline server (toolgate's HTTP route for MCP; the small database for scale). */
  baseline: number | null;
  toolgate: number | null;
}

export interface LatestEntry {
  id: string;
  backend: Backend;
  title: string;
  /** When and what was measured: kept here, not in the docs. */
  measured_at: string;
  commit: string | null;
  machine: { cpus: number; cpu_model: string; node: string };
  run: { rounds: number; duration_s: number; warmup_s: number; connections: number; accounts: number };
  rps: Pair & { ratio: number | null; ratio_by_round: (number | null)[] };
  p99_ms: Pair;
  cpu_us_per_request: Pair;
  peak_rss_mib: Pair;
  /** PostgreSQL entries: the ratio over SQLite's ratio of the same run, when SQLite ran in it. */
  rps_ratio_to_sqlite?: number;
  /**
   * Cores the rest of the machine (other processes, kernel threads) used during the rounds, median
   * over both sides' rounds; null when not measurable. Above NOISY_CORES the figures are noisy.
   */
  other_cores: number | null;
  /** The idle row (lib/idle.ts): toolgate's RSS at rest, the baseline's, and what the heap holds. */
  idle?: NonNullable<RunJson['idle']>;
}

export interface LatestFile {
  about: string;
  entries: LatestEntry[];
}

const ABOUT =
  "Written by npm run bench: per scenario and backend, the figures of the latest sound run that measured it (docs/performance.md's targets table is made from this file by npm run bench:table). rps is req/s, a median over rounds; ratio = toolgate / baseline.";

export function readLatest(file: string): LatestFile {
  if (!existsSync(file)) return { about: ABOUT, entries: [] };
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<LatestFile>;
  return { about: ABOUT, entries: Array.isArray(parsed.entries) ? parsed.entries : [] };
}

type Side = RunJson['scenarios'][number]['baseline'];

/**
 * The run's entries: one per scenario and backend, and one per scale comparison, except those the
 * run's warnings name (non-2xx answers, errors, a failed check: not figures to keep).
 */
export function entriesOf(run: RunJson): { entries: LatestEntry[]; suspect: string[] } {
  const common = {
    measured_at: run.generated_at,
    commit: run.commit,
    machine: { cpus: run.machine.cpus, cpu_model: run.machine.cpu_model, node: run.machine.node },
    run: {
      rounds: run.options.rounds,
      duration_s: run.options.duration,
      warmup_s: run.options.warmup,
      connections: run.options.connections,
      accounts: run.options.accounts,
    },
  };
  const pair = (a: Side, b: Side, pick: (s: Side) => number | null) => ({
    baseline: pick(a),
    toolgate: pick(b),
  });
  const entry = (
    id: string,
    backend: Backend,
    title: string,
    a: Side,
    b: Side,
    ratio: RunJson['scenarios'][number]['ratio'],
  ): LatestEntry => ({
    id,
    backend,
    title,
    ...common,
    rps: { ...pair(a, b, (s) => s.rps), ratio: ratio.rps, ratio_by_round: ratio.rps_by_round },
    p99_ms: pair(a, b, (s) => s.p99_ms),
    cpu_us_per_request: pair(a, b, (s) => s.cpu_us_per_request),
    peak_rss_mib: pair(a, b, (s) => s.peak_rss_mib),
    other_cores: otherCores([a, b]),
  });
  const all: LatestEntry[] = [
    ...run.scenarios.map((s) => ({
      ...entry(s.id, s.backend, s.title, s.baseline, s.toolgate, s.ratio),
      ...('rps_ratio_to_sqlite' in s ? { rps_ratio_to_sqlite: s.rps_ratio_to_sqlite } : {}),
    })),
    ...run.scale.map((s) =>
      entry(
        s.id,
        s.backend,
        `${s.title}, ${countName(s.large.accounts)} accounts against ${countName(s.small.accounts)}`,
        s.small_side,
        s.large_side,
        s.ratio_large_to_small,
      ),
    ),
  ];
  if (run.idle) all.push(idleEntry(run.idle, common));
  const named = (e: LatestEntry) => run.warnings.some((w) => w.startsWith(`${e.id} (${e.backend}):`));
  return {
    entries: all.filter((e) => !named(e)),
    suspect: all.filter(named).map((e) => `${e.id} (${e.backend})`),
  };
}

/** The idle measurement as an entry: no load, so no rates; its own figures under `idle`. */
function idleEntry(
  idle: NonNullable<RunJson['idle']>,
  common: Pick<LatestEntry, 'measured_at' | 'commit' | 'machine' | 'run'>,
): LatestEntry {
  const none = { baseline: null, toolgate: null };
  return {
    id: IDLE,
    backend: 'sqlite',
    title: 'idle, after start',
    ...common,
    run: { ...common.run, rounds: 1, duration_s: idle.waited_s, warmup_s: 0, connections: 0 },
    rps: { ...none, ratio: null, ratio_by_round: [] },
    p99_ms: none,
    cpu_us_per_request: none,
    peak_rss_mib: none,
    other_cores: null,
    idle,
  };
}

/** The median of what the rest of the machine used over every round of both sides, or null. */
function otherCores(sides: readonly Side[]): number | null {
  const each = sides.flatMap((s) => s.rounds.map((r) => r.cpu_cores?.other_processes ?? null));
  if (each.length === 0 || each.some((v) => v === null)) return null;
  return Math.round(median(each as number[]) * 100) / 100;
}

/** The file's entries with the run's in place of those of the same scenario and backend. */
export function merge(latest: LatestFile, entries: readonly LatestEntry[]): LatestFile {
  const key = (e: LatestEntry) => `${e.id} ${e.backend}`;
  const fresh = new Map(entries.map((e) => [key(e), e]));
  const kept = latest.entries.map((e) => fresh.get(key(e)) ?? e);
  const known = new Set(latest.entries.map(key));
  return { about: latest.about, entries: [...kept, ...entries.filter((e) => !known.has(key(e)))] };
}

/** The repository's formatter's line width (biome.json): the file is committed and linted. */
const LINE_WIDTH = 110;

/** JSON as the repository's formatter writes it: an array of plain values on one line where it fits. */
export function formatJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  return `${text.replace(/\[\n\s+([^[\]{}]*?)\n\s*\]/g, (whole, items: string, offset: number) => {
    const one = `[${items.split(/,\n\s+/).join(', ')}]`;
    const column = offset - (text.lastIndexOf('\n', offset) + 1);
    // A comma may follow the array on its line.
    return column + one.length + 1 <= LINE_WIDTH ? one : whole;
  })}\n`;
}

/** Merges a run into `file`; what was recorded and what was left out as suspect. */
export function recordRun(file: string, run: RunJson): { recorded: string[]; suspect: string[] } {
  const { entries, suspect } = entriesOf(run);
  if (entries.length > 0) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, formatJson(merge(readLatest(file), entries)));
  }
  return { recorded: entries.map((e) => `${e.id} (${e.backend})`), suspect };
}
