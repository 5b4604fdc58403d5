/**
 * @module PostgreSQL's schema: the numbered migrations applied in order under an advisory lock (the
 * same history as SQLite's), and the plan catalogue's upsert, which a first migration seeds.
 */
import type { EpochSeconds } from '../../domain/clock.js';
import type { Plan } from '../../domain/plans.js';
import { MIGRATIONS, migrationLabel } from '../migrations/index.js';
import type { PgQueryable } from './driver.js';
import type { PgTransactions } from './transactions.js';

const MIGRATION_LOCK = 7_264_001;

/** Applies the migrations not yet applied, in one transaction; seeds `plans` into an empty catalogue. */
export function migrate(
  t: PgTransactions,
  plans: readonly Plan[],
  now: EpochSeconds,
): Promise<{ applied: string[] }> {
  let changed = false;
  return t.tx(
    async (db) => {
      // Several servers starting at once: one migrates, the others wait and find nothing to do.
      await db.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
      const done = new Set(
        (await t.all<{ version: number }>('SELECT version FROM schema_migrations', [], db)).map(
          (r) => r.version,
        ),
      );
      const applied: string[] = [];
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        if (m.postgres !== null) await db.query(m.postgres);
        await db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          m.version,
          m.name,
          now,
        ]);
        applied.push(migrationLabel(m));
      }
      const { n } = (await t.one<{ n: number }>('SELECT count(*) AS n FROM plans', [], db))!;
      if (n === 0) for (const p of plans) await insertPlan(p, now, db);
      changed = applied.length > 0 || n === 0;
      return { applied };
    },
    // Every start (a server's, each CLI command's) migrates: only one that changed something
    // makes the servers forget their caches.
    () => (changed ? ['all'] : []),
  );
}

export async function insertPlan(plan: Plan, now: EpochSeconds, db: PgQueryable): Promise<void> {
  await db.query(
    `INSERT INTO plans (id, unlimited, limits, subscription, stripe_price, period_tokens, name, description, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $6, $7, $8, $9, $5, $5)
     ON CONFLICT (id) DO UPDATE SET unlimited = excluded.unlimited, limits = excluded.limits,
       subscription = excluded.subscription, stripe_price = excluded.stripe_price,
       period_tokens = excluded.period_tokens, name = excluded.name, description = excluded.description,
       updated_at = excluded.updated_at`,
    [
      plan.id,
      plan.unlimited,
      JSON.stringify(plan.limits),
      plan.subscription ?? null,
      now,
      plan.stripePrice ?? null,
      plan.periodTokens ?? null,
      plan.name ?? null,
      plan.description ?? null,
    ],
  );
}
