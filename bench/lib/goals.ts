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

/** The loud notices of missed targets. */
export function targetNotices(results: readonly ScenarioResult[]): string[] {
  return results
    .filter((r) => !met(r))
    .map(
      (r) =>
        `${r.id} (${r.backend}): TARGET MISSED: toolgate served ${r.ratio.rps.toFixed(2)}x the baseline's req/s, below its target ${r.target!.toFixed(2)}x`,
    );
}
