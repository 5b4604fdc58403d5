/**
 * @module Targets: the least toolgate / baseline req/s ratio a scenario is meant to reach (the
 * proxied scenarios have one), and whether this run's median ratio reached it. A missed target is a
 * loud notice, not a failure of the run: the exit code still says only whether the figures are sound.
 */
import type { ScenarioResult } from './runner.js';

export const met = (r: ScenarioResult) => r.target === null || r.ratio.rps >= r.target;

/** The table's target cell of a ratio row: `>= 0.80x met` or `>= 0.80x MISSED`; '' without a target. */
export function targetCell(r: ScenarioResult): string {
  if (r.target === null) return '';
  return `>= ${r.target.toFixed(2)}x ${met(r) ? 'met' : 'MISSED'}`;
}

/** One line per scenario with a target, for the text under the table. */
export function targetLine(r: ScenarioResult): string | null {
  if (r.target === null) return null;
  return `target: toolgate >= ${r.target.toFixed(2)}x the baseline's req/s; this run ${r.ratio.rps.toFixed(2)}x (by round ${r.ratio.rpsByRound.map((x) => x.toFixed(2)).join(' ')}): ${met(r) ? 'met' : 'MISSED'}`;
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
  const out = results
    .filter((r) => !met(r))
    .map(
      (r) =>
        `${r.id} (${r.backend}): TARGET MISSED: toolgate served ${r.ratio.rps.toFixed(2)}x the baseline's req/s, below its target ${r.target!.toFixed(2)}x`,
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
