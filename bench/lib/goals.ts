/**
 * @module Targets: what a scenario is meant to reach (the least toolgate / baseline req/s ratio,
 * with a stretch beyond it; the most p99 latency; the most peak RSS), and whether this run reached
 * it. A missed target is a loud notice, not a failure of the run: the exit code still says only
 * whether the figures are sound (one run's ratio on a shared machine moves by more than a margin).
 */
import type { Scenario } from '../scenarios/scenario.js';
import type { Backend } from './args.js';
import type { ScenarioResult } from './runner.js';

/** The large database's get_account within 10% of the small one's: large / small req/s >= 0.90. */
export const SCALE_TARGET = 0.9;

/** A scenario's req/s target on a backend: its one target, or that backend's, or null. */
export function targetOn(scenario: Pick<Scenario, 'target'>, backend: Backend): number | null {
  const t = scenario.target;
  if (t === undefined) return null;
  return typeof t === 'number' ? t : (t[backend] ?? null);
}

/** One target of one result, judged: met is null when the figure could not be measured. */
export interface Judged {
  /** What is judged: `req/s`, `p99`, `peak RSS`. */
  goal: string;
  /** The target as written in the table: `>= 0.60x`, `<= 5 ms`, `<= 150 MiB`. */
  target: string;
  /** This run's figure, as written in the table. */
  value: string;
  met: boolean | null;
}

/** Every target of a result, judged; empty for a result without any. */
export function judge(r: ScenarioResult): Judged[] {
  const out: Judged[] = [];
  if (r.target !== null)
    out.push({
      goal: 'req/s',
      target: `>= ${r.target.toFixed(2)}x`,
      value: `${r.ratio.rps.toFixed(2)}x`,
      met: r.ratio.rps >= r.target,
    });
  if (r.p99Max !== null)
    out.push({
      goal: 'p99',
      target: `<= ${r.p99Max} ms`,
      value: `${r.toolgate.p99.toFixed(1)} ms`,
      met: r.toolgate.p99 <= r.p99Max,
    });
  if (r.peakRssMax !== null) {
    const peak = r.toolgate.memory.peakMib;
    out.push({
      goal: 'peak RSS',
      target: `<= ${r.peakRssMax} MiB`,
      value: peak === null ? '?' : `${peak.toFixed(1)} MiB`,
      met: peak === null ? null : peak <= r.peakRssMax,
    });
  }
  return out;
}

export const met = (r: ScenarioResult) => judge(r).every((j) => j.met !== false);

/** Whether the stretch ratio was reached; null without one. */
export const stretchMet = (r: ScenarioResult) => (r.stretch === null ? null : r.ratio.rps >= r.stretch);

/** The table's target cell of a ratio row: `>= 0.60x met (stretch 0.90x not reached); <= 150 MiB MISSED`. */
export function targetCell(r: ScenarioResult): string {
  return judge(r)
    .map((j) => {
      const stretch =
        j.goal === 'req/s' && r.stretch !== null
          ? ` (stretch ${r.stretch.toFixed(2)}x ${stretchMet(r) ? 'reached' : 'not reached'})`
          : '';
      return `${j.goal} ${j.target} ${verdict(j.met)}${stretch}`;
    })
    .join('; ');
}

const verdict = (m: boolean | null) => (m === null ? 'not measured' : m ? 'met' : 'MISSED');

/** One line per scenario with a target, for the text under the table. */
export function targetLine(r: ScenarioResult): string | null {
  const all = judge(r);
  if (all.length === 0) return null;
  const parts = all.map((j) => {
    const rounds =
      j.goal === 'req/s' ? ` (by round ${r.ratio.rpsByRound.map((x) => x.toFixed(2)).join(' ')})` : '';
    const stretch =
      j.goal === 'req/s' && r.stretch !== null
        ? `; stretch ${r.stretch.toFixed(2)}x ${stretchMet(r) ? 'reached' : 'not reached'}`
        : '';
    return `${j.goal} ${j.target}: ${j.value}${rounds} ${verdict(j.met)}${stretch}`;
  });
  return `targets (toolgate; req/s as a ratio to the baseline): ${parts.join('; ')}`;
}

/** A scenario measured on both backends: its PostgreSQL ratio over its SQLite ratio, and that target. */
export function acrossBackends(results: readonly ScenarioResult[], id: string) {
  const sqlite = results.find((r) => r.id === id && r.backend === 'sqlite');
  const postgres = results.find((r) => r.id === id && r.backend === 'postgres');
  if (!sqlite || !postgres) return null;
  const rps = postgres.ratio.rps / sqlite.ratio.rps;
  const target = postgres.postgresTarget;
  return { sqlite, postgres, rps, target, met: target === null || rps >= target };
}

/** The loud notices of missed targets. */
export function targetNotices(results: readonly ScenarioResult[]): string[] {
  const out: string[] = [];
  for (const r of results)
    for (const j of judge(r))
      if (j.met === false)
        out.push(
          j.goal === 'req/s'
            ? `${r.id} (${r.backend}): TARGET MISSED: toolgate served ${r.ratio.rps.toFixed(2)}x the baseline's req/s, below its target ${r.target!.toFixed(2)}x`
            : `${r.id} (${r.backend}): TARGET MISSED: toolgate's ${j.goal} was ${j.value}, above its target ${j.target}`,
        );
  for (const id of new Set(results.map((r) => r.id))) {
    const b = acrossBackends(results, id);
    if (b && !b.met)
      out.push(
        `${id}: TARGET MISSED: on postgres toolgate served ${b.rps.toFixed(2)}x what it served on sqlite (ratios to the baseline divided), below its target ${b.target!.toFixed(2)}x`,
      );
  }
  return out;
}
