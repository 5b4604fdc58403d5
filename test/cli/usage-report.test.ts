/**
 * `toolgate usage report` (the built CLI on a scratch SQLite file): an account's history by day, key
 * and tool, for people, as JSON and as CSV, and the exit codes of what it refuses; and
 * `toolgate plans set --subscription`. Rows are seeded straight into the file's rollup, as servers
 * write it; the CLI runs on the system clock, so the tests name their ranges (the default one is
 * checked against today).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRow } from '../../src/domain/usage-history.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type Scratch, scratch } from './run-cli.js';

let t: Scratch;
let accountId: string;
let keyA: string;
let keyB: string;
const RANGE = ['--from', '2026-04-09', '--to', '2026-04-12'];

const row = (r: Partial<UsageRow> & Pick<UsageRow, 'day' | 'keyId' | 'tool'>): UsageRow => ({
  accountId,
  surface: 'http',
  calls: 1,
  tokens: 0,
  records: 0,
  withData: 0,
  withoutData: 1,
  failed: 0,
  ...r,
});

beforeAll(async () => {
  t = scratch();
  // The CLI migrates the file first; the rollup is then written as a server writes it.
  accountId = (await t.json('accounts', 'create', '--name', 'Report Co')).id;
  keyA = (await t.json('keys', 'create', accountId, '--name', 'a')).id;
  keyB = (await t.json('keys', 'create', accountId, '--name', 'b')).id;
  const store = new SqliteStore({ path: join(t.dir, 't.db') });
  try {
    await store.usageHistory.add([
      row({ day: '2026-04-10', keyId: keyA, tool: 'lookup', calls: 3, tokens: 9, withoutData: 3 }),
      row({
        day: '2026-04-10',
        keyId: keyB,
        tool: 'find "people", fast',
        surface: 'mcp',
        calls: 2,
        tokens: 10,
        records: 4,
        withData: 2,
        withoutData: 0,
      }),
      row({ day: '2026-04-12', keyId: keyB, tool: 'lookup', calls: 1, withoutData: 0, failed: 1 }),
      // Another month: a tool metered in pages, beside one in records.
      row({
        day: '2026-03-02',
        keyId: keyA,
        tool: 'fetch_pages',
        calls: 2,
        units: { pages: 40 },
        withData: 2,
        withoutData: 0,
      }),
      row({ day: '2026-03-02', keyId: keyA, tool: 'lookup', records: 3, withData: 1, withoutData: 0 }),
    ]);
  } finally {
    await store.close();
  }
});
afterAll(() => t.cleanup());

const sortedKeys = () => [keyA, keyB].sort();

describe('toolgate usage report', () => {
  it('by day (the default grouping): a table of every day and a totals line', async () => {
    const r = await t.run('usage', 'report', accountId, ...RANGE);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `Usage of ${accountId} from 2026-04-09 to 2026-04-12, by day:`,
        '',
        'DATE        CALLS  TOKENS  RECORDS  WITH DATA  WITHOUT DATA  FAILED',
        '2026-04-09  0      0       0        0          0             0',
        '2026-04-10  5      19      4        2          3             0',
        '2026-04-11  0      0       0        0          0             0',
        '2026-04-12  1      0       0        0          0             1',
        '',
        'Total: 6 calls, 19 tokens, 4 records, 2 with data, 3 without data, 1 failed.',
        '',
      ].join('\n'),
    );
  });

  it('--json: the history as the admin API answers it', async () => {
    const j = await t.json('usage', 'report', accountId, ...RANGE, '--by', 'key');
    expect(j).toEqual({
      account_id: accountId,
      from: '2026-04-09',
      to: '2026-04-12',
      by: 'key',
      rows: expect.any(Array),
      totals: { calls: 6, tokens: 19, records: 4, with_data: 2, without_data: 3, failed: 1 },
    });
    const byKey = Object.fromEntries(j.rows.map((r: { key_id: string }) => [r.key_id, r]));
    expect(j.rows.map((r: { key_id: string }) => r.key_id)).toEqual(sortedKeys());
    expect(byKey[keyA]).toEqual({
      key_id: keyA,
      calls: 3,
      tokens: 9,
      records: 0,
      with_data: 0,
      without_data: 3,
      failed: 0,
    });
    expect(byKey[keyB]).toMatchObject({ calls: 3, tokens: 10, records: 4, failed: 1 });

    const days = await t.json('usage', 'report', accountId, ...RANGE);
    expect(days.rows.map((r: { day: string; calls: number }) => [r.day, r.calls])).toEqual([
      ['2026-04-09', 0],
      ['2026-04-10', 5],
      ['2026-04-11', 0],
      ['2026-04-12', 1],
    ]);
  });

  it('by key and by tool for people: the column is named by the grouping', async () => {
    const keys = await t.run('usage', 'report', accountId, ...RANGE, '--by', 'key');
    // Each key by its id and its name.
    expect(keys.stdout).toMatch(
      /^KEY\s+NAME\s+CALLS\s+TOKENS\s+RECORDS\s+WITH DATA\s+WITHOUT DATA\s+FAILED$/m,
    );
    expect(keys.stdout).toMatch(new RegExp(`^${keyA}\\s+a\\s+3\\s+9\\s+0\\s+0\\s+3\\s+0$`, 'm'));
    const tools = await t.run('usage', 'report', accountId, ...RANGE, '--by', 'tool');
    expect(tools.stdout).toMatch(/^TOOL\s+CALLS/m);
    expect(tools.stdout).toMatch(/^lookup\s+4\s+9\s+0\s+0\s+3\s+1$/m);
    expect(tools.stdout).toContain('Total: 6 calls');
    // A range without calls, by key: said, not an empty table.
    const quiet = await t.run(
      'usage',
      'report',
      accountId,
      '--from',
      '2026-01-01',
      '--to',
      '2026-01-02',
      '--by',
      'key',
    );
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toContain('No calls.');
    expect(quiet.stdout).toContain('Total: 0 calls,');
  });

  it('--csv: a header named by the grouping, one line per row, quoted where needed, no totals', async () => {
    const days = await t.run('usage', 'report', accountId, ...RANGE, '--csv');
    expect(days.code).toBe(0);
    expect(days.stdout).toBe(
      [
        'day,calls,tokens,records,with_data,without_data,failed',
        '2026-04-09,0,0,0,0,0,0',
        '2026-04-10,5,19,4,2,3,0',
        '2026-04-11,0,0,0,0,0,0',
        '2026-04-12,1,0,0,0,0,1',
        '',
      ].join('\n'),
    );
    const keys = await t.run('usage', 'report', accountId, ...RANGE, '--by', 'key', '--csv');
    const lines = keys.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('key_id,calls,tokens,records,with_data,without_data,failed');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(sortedKeys());
    const tools = await t.run('usage', 'report', accountId, ...RANGE, '--by', 'tool', '--csv');
    expect(tools.stdout).toBe(
      [
        'tool,calls,tokens,records,with_data,without_data,failed',
        '"find ""people"", fast",2,10,4,2,0,0',
        'lookup,4,9,0,0,3,1',
        '',
      ].join('\n'),
    );
  });

  it('shows the amounts of a tool metered in pages in their own column, apart from records', async () => {
    const march = ['--from', '2026-03-01', '--to', '2026-03-02'];
    const text = await t.run('usage', 'report', accountId, ...march, '--by', 'tool');
    expect(text.stdout).toMatch(
      /^TOOL\s+CALLS\s+TOKENS\s+RECORDS\s+PAGES\s+WITH DATA\s+WITHOUT DATA\s+FAILED$/m,
    );
    expect(text.stdout).toMatch(/^fetch_pages\s+2\s+0\s+0\s+40\s+2\s+0\s+0$/m);
    expect(text.stdout).toMatch(/^lookup\s+1\s+0\s+3\s+0\s+1\s+0\s+0$/m);
    expect(text.stdout).toContain(
      'Total: 3 calls, 0 tokens, 3 records, 40 pages, 3 with data, 0 without data, 0 failed.',
    );
    const csv = await t.run('usage', 'report', accountId, ...march, '--csv');
    expect(csv.stdout).toBe(
      [
        'day,calls,tokens,records,pages,with_data,without_data,failed',
        '2026-03-01,0,0,0,0,0,0,0',
        '2026-03-02,3,0,3,40,3,0,0',
        '',
      ].join('\n'),
    );
  });

  it('defaults to the 30 UTC days ending today', async () => {
    const j = await t.json('usage', 'report', accountId);
    const today = new Date().toISOString().slice(0, 10);
    expect(j.by).toBe('day');
    expect(j.to).toBe(today);
    expect(j.rows).toHaveLength(30);
    expect(j.rows.at(-1).day).toBe(today);
  });

  it('--json with --csv is a usage error (exit 2)', async () => {
    const r = await t.run('usage', 'report', accountId, '--json', '--csv');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'error', code: 'invalid_arguments' });
    const human = await t.run('usage', 'report', accountId, '--csv', '--json');
    expect(human.code).toBe(2);
  });

  it("refuses bad dates, ranges and groupings with the service's invalid_arguments (exit 2)", async () => {
    const bad = await t.run('usage', 'report', accountId, '--from', '2026-02-30');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('toolgate: from must be a day, YYYY-MM-DD.\n');
    const reversed = await t.run(
      'usage',
      'report',
      accountId,
      '--from',
      '2026-04-10',
      '--to',
      '2026-04-09',
      '--json',
    );
    expect(reversed.code).toBe(2);
    expect(JSON.parse(reversed.stdout)).toMatchObject({
      code: 'invalid_arguments',
      message: 'from must not be after to.',
    });
    const long = await t.run(
      'usage',
      'report',
      accountId,
      '--from',
      '2025-01-01',
      '--to',
      '2026-04-15',
      '--csv',
    );
    expect(long.code).toBe(2);
    expect(long.stdout).toBe('');
    expect(long.stderr).toContain('400 days');
    const by = await t.run('usage', 'report', accountId, '--by', 'week');
    expect(by.code).toBe(2);
    expect(by.stderr).toBe('toolgate: by must be day, key or tool.\n');
  });

  it('an unknown account is exit 1', async () => {
    const r = await t.run('usage', 'report', 'acc_nope');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('toolgate: No account "acc_nope".\n');
    const j = await t.run('usage', 'report', 'acc_nope', '--json');
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ status: 'error', error: 'Not Found', code: 'not_found' });
  });
});

describe('toolgate plans set --subscription', () => {
  const LIMITS = [
    'enrich.records.5h=1',
    'enrich.records.1w=2',
    'enrich.requests.5h=3',
    'search.records.5h=4',
    'search.records.1w=5',
    'search.requests.5h=6',
  ];
  const listed = async (id: string) =>
    (await t.json<Array<{ id: string; subscription: unknown }>>('plans', 'list')).find((p) => p.id === id);

  it('a new plan is no subscription; --subscription monthly makes it one, and set keeps it', async () => {
    const fresh = await t.json('plans', 'set', 'sub_x', ...LIMITS);
    expect(fresh.subscription).toBeNull();
    expect((await listed('free'))?.subscription).toBeNull();
    expect((await listed('subscription_27'))?.subscription).toBe('monthly');

    const monthly = await t.json('plans', 'set', 'sub_x', '--subscription', 'monthly');
    expect(monthly).toMatchObject({
      id: 'sub_x',
      subscription: 'monthly',
      limits: { enrich: { records: { '5h': 1 } } },
    });
    expect((await listed('sub_x'))?.subscription).toBe('monthly');
    // Changing a limit leaves the subscription as it is.
    expect((await t.json('plans', 'set', 'sub_x', 'search.requests.5h=9')).subscription).toBe('monthly');

    const human = await t.run('plans', 'list');
    expect(human.stdout).toMatch(/^PLAN\s+UNLIMITED\s+SUBSCRIPTION\s+/m);
    expect(human.stdout).toMatch(/^sub_x\s+no\s+monthly\s+-\s+-$/m);
    // Its limits in its own column of the limits table.
    expect(human.stdout).toMatch(/^LIMIT\s+free\s+sub_x\s+/m);
    expect(human.stdout).toMatch(/^search requests 5h\s+250\s+9\s+/m);
    expect(human.stdout).toMatch(/^free\s+no\s+none\s+/m);

    expect((await t.json('plans', 'set', 'sub_x', '--subscription', 'none')).subscription).toBeNull();
    expect((await listed('sub_x'))?.subscription).toBeNull();

    const audit = await t.json<
      Array<{ action: string; target_id: string; details: { subscription: unknown } }>
    >('audit', 'list');
    expect(
      audit
        .filter((e) => e.action === 'plan.put' && e.target_id === 'sub_x')
        .map((e) => e.details.subscription),
    ).toEqual([null, 'monthly', 'monthly', null]);
  });

  it('refuses any other value as a usage error (exit 2), changing nothing', async () => {
    await t.json('plans', 'set', 'sub_y', ...LIMITS, '--subscription', 'monthly');
    const r = await t.run('plans', 'set', 'sub_y', '--subscription', 'yearly');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--subscription must be monthly or none.');
    expect((await listed('sub_y'))?.subscription).toBe('monthly');
  });
});
