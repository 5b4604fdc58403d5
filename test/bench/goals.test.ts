/** The bench's targets (bench/lib/goals.ts): a result's own, and consumption on PostgreSQL against the same on SQLite. */
import { describe, expect, it } from 'vitest';
import { acrossBackends, judge, met, targetCell, targetNotices } from '../../bench/lib/goals.js';
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
  stretch: null,
  p99Max: null,
  peakRssMax: null,
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

describe('the goals of one result', () => {
  const mcp = (rps: number, peakMib: number | null): ScenarioResult => ({
    ...result('sqlite', rps, null),
    id: 'mcp_2026',
    toolgate: { p99: 4, memory: { peakMib } } as SideResult,
    target: 0.6,
    stretch: 0.9,
    peakRssMax: 150,
  });

  it('judges req/s and peak RSS, and shows the stretch without making it a miss', () => {
    expect(judge(mcp(0.7, 140)).map((j) => j.met)).toEqual([true, true]);
    expect(met(mcp(0.7, 140))).toBe(true);
    expect(targetCell(mcp(0.7, 140))).toBe(
      'req/s >= 0.60x met (stretch 0.90x not reached); peak RSS <= 150 MiB met',
    );
    expect(targetNotices([mcp(0.7, 140)])).toEqual([]);
  });

  it('is a loud notice for each target missed', () => {
    expect(met(mcp(0.5, 160))).toBe(false);
    expect(targetNotices([mcp(0.5, 160)])).toEqual([
      "mcp_2026 (sqlite): TARGET MISSED: toolgate served 0.50x the baseline's req/s, below its target 0.60x",
      "mcp_2026 (sqlite): TARGET MISSED: toolgate's peak RSS was 160.0 MiB, above its target <= 150 MiB",
    ]);
  });

  it('does not judge a peak RSS it could not measure', () => {
    expect(judge(mcp(0.7, null))[1]?.met).toBeNull();
    expect(met(mcp(0.7, null))).toBe(true);
  });
});
