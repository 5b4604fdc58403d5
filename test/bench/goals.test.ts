/** The bench's cross-backend target (bench/lib/goals.ts): consumption on PostgreSQL against the same on SQLite. */
import { describe, expect, it } from 'vitest';
import { acrossBackends, targetNotices } from '../../bench/lib/goals.js';
import type { ScenarioResult, SideResult } from '../../bench/lib/runner.js';

const result = (
  backend: 'sqlite' | 'postgres',
  rps: number,
  postgresTarget: number | null,
): ScenarioResult => ({
  id: 'consumption',
  backend,
  title: 'consumption (HTTP)',
  description: '',
  baseline: {} as SideResult,
  toolgate: {} as SideResult,
  ratio: { rps, p50: 1, p99: 1, rpsByRound: [rps] },
  target: null,
  postgresTarget,
  notes: [],
});

describe('the PostgreSQL-to-SQLite target', () => {
  it('divides the two ratios and says whether the target is met', () => {
    const met = acrossBackends([result('sqlite', 0.8, 0.5), result('postgres', 0.44, 0.5)], 'consumption');
    expect(met?.rps).toBeCloseTo(0.55);
    expect(met?.met).toBe(true);
    const missed = acrossBackends([result('sqlite', 0.8, 0.5), result('postgres', 0.2, 0.5)], 'consumption');
    expect(missed?.met).toBe(false);
  });

  it('is a loud notice only when missed, and nothing when one backend did not run', () => {
    expect(targetNotices([result('sqlite', 0.8, 0.5), result('postgres', 0.2, 0.5)])).toEqual([
      'consumption: TARGET MISSED: on postgres toolgate served 0.25x what it served on sqlite (ratios to the baseline divided), below its target 0.50x',
    ]);
    expect(targetNotices([result('sqlite', 0.8, 0.5), result('postgres', 0.6, 0.5)])).toEqual([]);
    expect(acrossBackends([result('sqlite', 0.8, 0.5)], 'consumption')).toBeNull();
  });
});
