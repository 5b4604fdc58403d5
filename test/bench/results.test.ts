/**
 * The figures file and the table made from it (bench/lib/results.ts, bench/lib/doc-table.ts): a
 * partial run replaces only its own scenarios' figures, suspect figures are not kept, each row is
 * judged against its targets, and docs/performance.md's table is the one bench/results/latest.json makes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { END, replaceBetweenMarkers, START, status, targetsTable } from '../../bench/lib/doc-table.js';
import type { RunJson } from '../../bench/lib/report-json.js';
import { formatJson, type LatestEntry, readLatest, recordRun } from '../../bench/lib/results.js';
import { updateDoc } from '../../bench/table.js';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-results-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const side = (rps: number, p99: number, rss: number) => ({
  rps,
  p99_ms: p99,
  cpu_us_per_request: 1e6 / rps,
  peak_rss_mib: rss,
  rounds: [{ cpu_cores: { other_processes: 0.1 } }, { cpu_cores: { other_processes: 0.5 } }],
});

/** A run's JSON with only what the figures file reads. */
function run(
  at: string,
  scenarios: { id: string; backend: 'sqlite' | 'postgres'; ratio: number }[],
  warnings: string[] = [],
): RunJson {
  return {
    generated_at: at,
    commit: 'abc',
    machine: { cpus: 2, cpu_model: 'test cpu', node: 'v20' },
    options: { rounds: 2, duration: 3, warmup: 3, connections: 50, accounts: 1000 },
    scenarios: scenarios.map((s) => ({
      id: s.id,
      backend: s.backend,
      title: s.id,
      baseline: side(10_000, 3, 100),
      toolgate: side(10_000 * s.ratio, 4, 140),
      ratio: { rps: s.ratio, rps_by_round: [s.ratio, s.ratio] },
    })),
    scale: [],
    warnings,
  } as unknown as RunJson;
}

describe('bench/results/latest.json', () => {
  it('keeps the scenarios a partial run did not measure, and replaces those it did', () => {
    const file = join(dir, 'merge.json');
    recordRun(
      file,
      run('2000-01-01T00:00:00Z', [
        { id: 'get_account', backend: 'sqlite', ratio: 0.9 },
        { id: 'get_account', backend: 'postgres', ratio: 0.8 },
        { id: 'mcp_2026', backend: 'sqlite', ratio: 0.3 },
      ]),
    );
    recordRun(file, run('2000-01-02T00:00:00Z', [{ id: 'mcp_2026', backend: 'sqlite', ratio: 0.7 }]));
    const entries = readLatest(file).entries;
    expect(entries[0]?.other_cores).toBe(0.3);
    expect(entries.map((e) => [e.id, e.backend, e.rps.ratio, e.measured_at])).toEqual([
      ['get_account', 'sqlite', 0.9, '2000-01-01T00:00:00Z'],
      ['get_account', 'postgres', 0.8, '2000-01-01T00:00:00Z'],
      ['mcp_2026', 'sqlite', 0.7, '2000-01-02T00:00:00Z'],
    ]);
  });

  it('is written as the formatter of the repository writes JSON (it is committed and linted)', () => {
    expect(formatJson({ a: { b: [0.9, 0.85] }, c: [] })).toBe(
      '{\n  "a": {\n    "b": [0.9, 0.85]\n  },\n  "c": []\n}\n',
    );
    const long = Array.from({ length: 30 }, (_, i) => i + 0.125);
    // Too long for one line: one value a line, as the formatter leaves it.
    expect(formatJson({ long })).toBe(`${JSON.stringify({ long }, null, 2)}\n`);
  });

  it('does not keep figures the run warned about', () => {
    const file = join(dir, 'suspect.json');
    const outcome = recordRun(
      file,
      run(
        '2000-01-01T00:00:00Z',
        [
          { id: 'get_account', backend: 'sqlite', ratio: 0.9 },
          { id: 'mcp_2026', backend: 'sqlite', ratio: 0.7 },
        ],
        ['mcp_2026 (sqlite): toolgate answered 3 non-2xx {"500":3}: its figures are not valid'],
      ),
    );
    expect(outcome).toEqual({ recorded: ['get_account (sqlite)'], suspect: ['mcp_2026 (sqlite)'] });
    expect(readLatest(file).entries.map((e) => e.id)).toEqual(['get_account']);
  });
});

describe('the targets table', () => {
  const entry = (ratio: number, rss: number): LatestEntry =>
    ({
      rps: { ratio, ratio_by_round: [ratio] },
      p99_ms: { baseline: 3, toolgate: 4 },
      cpu_us_per_request: { baseline: 30, toolgate: 40 },
      peak_rss_mib: { baseline: 140, toolgate: rss },
    }) as LatestEntry;
  const mcp = {
    id: 'mcp_2026',
    backend: 'sqlite',
    title: 'mcp',
    rps: 0.6,
    stretch: 0.9,
    peakRssMib: 150,
  } as const;

  it('says met, names what is missed, and shows the stretch', () => {
    expect(status(mcp, entry(0.7, 140))).toBe('met; stretch not reached');
    expect(status(mcp, entry(0.95, 140))).toBe('met; stretch reached');
    expect(status(mcp, entry(0.5, 160))).toBe('**missed**: req/s, peak RSS; stretch not reached');
    expect(status(mcp, undefined)).toBe('not measured');
    expect(status({ id: 'proxied_charged', backend: 'sqlite', title: 'c' }, entry(0.6, 160))).toBe('shown');
    expect(status(mcp, { ...entry(0.7, 140), other_cores: 1.2 })).toBe(
      'met; stretch not reached; noisy (other processes 1.20 cores)',
    );
  });

  it('replaces only what lies between its markers', () => {
    const doc = `# T\n\nbefore\n${START}\nold\n${END}\nafter\n`;
    expect(replaceBetweenMarkers(doc, 'new')).toBe(`# T\n\nbefore\n${START}\nnew\n${END}\nafter\n`);
    expect(() => replaceBetweenMarkers('# T\n', 'new')).toThrow(/targets:start/);
    expect(targetsTable([mcp], { about: '', entries: [] })).toContain('No figures recorded yet');
  });

  it('in docs/performance.md is the one bench/results/latest.json makes (npm run bench:table)', () => {
    const doc = join(ROOT, 'docs', 'performance.md');
    expect(readFileSync(doc, 'utf8')).toContain(START);
    expect(updateDoc(join(ROOT, 'bench', 'results', 'latest.json'), doc, false)).toBe(false);
  });
});
