/**
 * The bulk seeding of the scale comparison (bench/lib/seeding.ts, bench/lib/seed-fair-use.ts): the
 * seeded accounts' fair-use windows come in the shares the module says, run past the bench's load or
 * are over, and toolgate's own store reads them back as seeded, on SQLite and on PostgreSQL. Seeding
 * runs toolgate's CLI first, so `npm run build` comes before these tests (as before the CLI's).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  draw,
  FAIR_USE_SHARES,
  fairUseOf,
  noFairUse,
  RUNNING_5H_OF_WEEK,
  RUNNING_WEEK,
} from '../../bench/lib/seed-fair-use.js';
import { seed } from '../../bench/lib/seeding.js';
import type { WindowState } from '../../src/domain/fair-use.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { KEY_SECRET } from '../helpers.js';
import { POSTGRES_URL, postgresAvailable, scratchPostgresStore } from '../postgres.js';

const NOW = 1_800_000_000;
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-seeding-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the seeded fair-use windows', () => {
  it('come in the shares the module states, also among accounts taken at a stride', () => {
    const all = noFairUse();
    const strided = noFairUse();
    const perCategory = { enrich: 0, search: 0 };
    for (let n = 0; n < 1_000_000; n++) {
      const f = fairUseOf(n, NOW, all);
      if (f?.enrich) perCategory.enrich++;
      if (f?.search) perCategory.search++;
      // The scale comparison rotates over every 1,000th account of a million.
      if (n % 1000 === 0) fairUseOf(n, NOW, strided);
    }
    expect(perCategory.enrich / 1e6).toBeCloseTo(FAIR_USE_SHARES.enrich, 2);
    expect(perCategory.search / 1e6).toBeCloseTo(FAIR_USE_SHARES.search, 2);
    expect(all.runningWeek / all.rows).toBeCloseTo(RUNNING_WEEK, 2);
    expect(all.running5h / all.rows).toBeCloseTo(RUNNING_WEEK * RUNNING_5H_OF_WEEK, 2);
    expect(all.accounts / 1e6).toBeCloseTo(1 - (1 - 0.4) * (1 - 0.3), 2);
    // 1,000 accounts: within a few standard deviations of the whole.
    expect(Math.abs(strided.accounts / 1000 - all.accounts / 1e6)).toBeLessThan(0.06);
    expect(Math.abs(strided.runningWeek / strided.rows - RUNNING_WEEK)).toBeLessThan(0.06);
  });

  it('run for at least an hour more, or are over, and are kept in key order', () => {
    const counts = noFairUse();
    for (let n = 0; n < 5_000; n++) {
      for (const stored of Object.values(fairUseOf(n, NOW, counts) ?? {})) {
        expect(stored.map(([unit, window]) => `${unit}.${window}`)).toEqual([
          'records.1w',
          'records.5h',
          'requests.5h',
        ]);
        const [week, hours, requests] = stored;
        for (const [, window, startedAt, endsAt, used] of stored) {
          expect(endsAt - startedAt).toBe(window === '1w' ? 604_800 : 18_000);
          expect(startedAt).toBeLessThanOrEqual(NOW);
          expect(endsAt <= NOW || endsAt >= NOW + 3600).toBe(true);
          expect(used).toBeGreaterThan(0);
        }
        // One consumption starts every window of its category: 5 hours run only within a running week.
        if (hours![3] > NOW) expect(week![3]).toBeGreaterThan(NOW);
        expect(hours![2]).toBe(requests![2]);
        expect(hours![4] % requests![4]).toBe(0);
      }
    }
    expect(fairUseOf(12_345, NOW, noFairUse())).toEqual(fairUseOf(12_345, NOW, noFairUse()));
    expect(draw(1, 2)).not.toBe(draw(2, 1));
  });
});

const ACCOUNTS = 2000;

/** Seeds ACCOUNTS accounts with one key each, then reads every account back with `store`. */
async function seedAndRead(databaseUrl: string, schema: string | undefined, open: () => Store) {
  const result = await seed({
    accounts: ACCOUNTS,
    keysPerAccount: 1,
    databaseUrl,
    schema,
    keySecret: KEY_SECRET,
    sample: ACCOUNTS,
    batch: 700,
    now: NOW,
  });
  const store = open();
  try {
    const expected = noFairUse();
    let rows = 0;
    for (const [n, { accountId }] of result.sample.entries()) {
      const snapshot = await store.accounts.snapshot(accountId);
      const seeded = Object.entries(fairUseOf(n, NOW, expected) ?? {}).flatMap(([category, stored]) =>
        stored.map(
          ([unit, window, startedAt, endsAt, used]): WindowState => ({
            category,
            unit,
            window,
            startedAt,
            endsAt,
            used,
          }),
        ),
      );
      expect(snapshot?.plan.id).toBe('bench');
      expect(snapshot?.windows).toEqual(seeded);
      rows += new Set(snapshot?.windows.map((w) => w.category)).size;
    }
    expect(result.fairUse).toEqual(expected);
    expect(rows).toBe(result.fairUse.rows);
    expect(result.fairUse.accounts).toBeGreaterThan(ACCOUNTS * 0.5);
  } finally {
    await store.close();
  }
}

describe('a seeded database, read by toolgate', () => {
  it('on SQLite has every account with the windows seeded for it', async () => {
    const path = join(dir, 'seeded.db');
    await seedAndRead(`sqlite:${path}`, undefined, () => new SqliteStore({ path }));
  }, 60_000);

  it('on PostgreSQL has every account with the windows seeded for it', async (t) => {
    if (!(await postgresAvailable())) return t.skip();
    const scratch = scratchPostgresStore();
    try {
      await seedAndRead(POSTGRES_URL, scratch.schema, () => scratchPostgresStore(scratch.schema).store);
    } finally {
      await scratch.cleanup();
    }
  }, 60_000);
});
