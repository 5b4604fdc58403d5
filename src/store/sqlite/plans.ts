/** @module SQLite's plan catalogue (store.plans). */
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import type { Plan } from '../../domain/plans.js';
import type { PlanStore } from '../plans-store.js';
import { type PlanRow, toPlan } from '../rows.js';
import { writeAudit } from './audit.js';
import type { SqliteExecutor } from './executor.js';
import { insertPlan } from './schema.js';

export class SqlitePlans implements PlanStore {
  constructor(private readonly x: SqliteExecutor) {}

  async list(): Promise<Plan[]> {
    return this.x.attempt(() =>
      (
        this.x
          .sql(
            'SELECT id, unlimited, limits, subscription, stripe_price, period_tokens, name, description FROM plans ORDER BY id',
          )
          .all() as PlanRow[]
      ).map(toPlan),
    );
  }

  async get(id: string): Promise<Plan | undefined> {
    const row = await this.x.attempt(
      () =>
        this.x
          .sql(
            'SELECT id, unlimited, limits, subscription, stripe_price, period_tokens, name, description FROM plans WHERE id = ?',
          )
          .get(id) as PlanRow | undefined,
    );
    return row && toPlan(row);
  }

  async put(plan: Plan, now: EpochSeconds, audit?: AuditEntry): Promise<void> {
    await this.x.writeTx(
      () => {
        insertPlan(this.x, plan, now);
        writeAudit(this.x, audit);
      },
      () => ['all'],
    );
  }
}
