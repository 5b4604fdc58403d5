/** The bench's "before" side (bench/lib/before.ts): which commit it builds, and the meters row of the targets table. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { beforeCommit, METERS, OAUTH } from '../../bench/lib/before.js';
import { targetRows } from '../../bench/lib/doc-table.js';
import { METERS_COST_ID, METERS_COST_TARGET } from '../../bench/scenarios/meters-cost.js';
import { gitHistoryAvailable } from '../git-history.js';

const repo = process.cwd();
const git = (...args: string[]) => spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
const has = (commit: string, path: string) => git('cat-file', '-e', `${commit}:${path}`).status === 0;
/** The before builds are found in the history: a copy without it skips them, loudly. */
const noHistory = !gitHistoryAvailable(
  repo,
  'The tests of the bench\'s "before" builds (test/bench/before.test.ts)',
);

describe.skipIf(noHistory)('the build before the meters', () => {
  it('is the last commit without migration 009, whose child adds it', () => {
    const before = beforeCommit(METERS, {}, repo);
    expect(before).toMatch(/^[0-9a-f]{40}$/);
    expect(has(before, 'src/store/migrations/009-meters.ts')).toBe(false);
    expect(has(before, 'src/store/migrations/008-ledger-idempotency-index.ts')).toBe(true);
    const children = git('rev-list', '--ancestry-path', '--reverse', `${before}..HEAD`).stdout.split('\n');
    expect(has(children[0]!, 'src/store/migrations/009-meters.ts')).toBe(true);
  });

  it('is the commit TOOLGATE_BENCH_BEFORE names, and refuses one that is not there', () => {
    const head = git('rev-parse', 'HEAD~1').stdout.trim();
    expect(beforeCommit(METERS, { TOOLGATE_BENCH_BEFORE: 'HEAD~1' }, repo)).toBe(head);
    expect(() => beforeCommit(METERS, { TOOLGATE_BENCH_BEFORE: 'no-such-commit' }, repo)).toThrow(
      /git rev-parse/,
    );
  });
});

describe.skipIf(noHistory)('the build before OAuth', () => {
  it('is the last commit without migration 012, whose child adds it; TOOLGATE_BENCH_BEFORE_OAUTH names another', () => {
    const before = beforeCommit(OAUTH, {}, repo);
    expect(has(before, 'src/store/migrations/012-oauth.ts')).toBe(false);
    expect(has(before, 'src/store/migrations/011-console.ts')).toBe(true);
    const children = git('rev-list', '--ancestry-path', '--reverse', `${before}..HEAD`).stdout.split('\n');
    expect(has(children[0]!, 'src/store/migrations/012-oauth.ts')).toBe(true);
    const head = git('rev-parse', 'HEAD~1').stdout.trim();
    expect(
      beforeCommit(OAUTH, { TOOLGATE_BENCH_BEFORE_OAUTH: 'HEAD~1', TOOLGATE_BENCH_BEFORE: 'HEAD' }, repo),
    ).toBe(head);
  });
});

describe('the targets table', () => {
  it('has the meters row on both backends: the 16 x 4 plan at most 1.5x the default plan', () => {
    const rows = targetRows([], ['sqlite', 'postgres']).filter((r) => r.id === METERS_COST_ID);
    expect(rows.map((r) => [r.backend, r.rps])).toEqual([
      ['sqlite', METERS_COST_TARGET],
      ['postgres', METERS_COST_TARGET],
    ]);
    expect(1 / METERS_COST_TARGET).toBeLessThanOrEqual(1.52);
    expect(1 / METERS_COST_TARGET).toBeGreaterThanOrEqual(1.5);
  });
});
