/**
 * @module SQLite's schema: the numbered migrations applied in order (the same history as
 * PostgreSQL's), and the plan catalogue's upsert, which a first migration seeds.
 */
import type { EpochSeconds } from '../../domain/clock.js';
import type { Plan } from '../../domain/plans.js';
import { MIGRATIONS, migrationLabel } from '../migrations/index.js';
import type { SqliteExecutor } from './executor.js';

/** Applies the migrations not yet applied, in one transaction; seeds `plans` into an empty catalogue. */
export function migrate(
  x: SqliteExecutor,
  plans: readonly Plan[],
  now: EpochSeconds,
): Promise<{ applied: string[] }> {
  return x.writeTx(
    () => {
      x.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
          version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
      const done = new Set(
        (x.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
          (r) => r.version,
        ),
      );
      const applied: string[] = [];
      for (const m of MIGRATIONS) {
        if (done.has(m.version)) continue;
        if (m.sqlite !== null) x.db.exec(m.sqlite);
        x.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(m.version, m.name, now);
        applied.push(migrationLabel(m));
      }
      const { n } = x.db.prepare('SELECT count(*) AS n FROM plans').get() as { n: number };
      if (n === 0) for (const p of plans) insertPlan(x, p, now);
      return { applied };
    },
    () => ['all'],
  );
}

export function insertPlan(x: SqliteExecutor, plan: Plan, now: EpochSeconds): void {
  x.sql(
    `INSERT INTO plans (id, unlimited, limits, subscription, stripe_price, period_tokens, name, description, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET unlimited = excluded.unlimited, limits = excluded.limits,
       subscription = excluded.subscription, stripe_price = excluded.stripe_price,
       period_tokens = excluded.period_tokens, name = excluded.name, description = excluded.description,
       updated_at = excluded.updated_at`,
  ).run(
    plan.id,
    plan.unlimited ? 1 : 0,
    JSON.stringify(plan.limits),
    plan.subscription ?? null,
    plan.stripePrice ?? null,
    plan.periodTokens ?? null,
    plan.name ?? null,
    plan.description ?? null,
    now,
    now,
  );
}
