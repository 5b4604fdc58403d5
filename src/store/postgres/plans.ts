/** @module PostgreSQL's plan catalogue (store.plans). */
import type { AuditEntry } from '../../domain/audit.js';
import type { EpochSeconds } from '../../domain/clock.js';
import type { Plan } from '../../domain/plans.js';
import type { PlanStore } from '../plans-store.js';
import { type PlanRow, toPlan } from '../rows.js';
import { writeAudit } from './audit.js';
import { guard } from './driver.js';
import { insertPlan } from './schema.js';
import type { PgTransactions } from './transactions.js';

export class PgPlans implements PlanStore {
  constructor(private readonly t: PgTransactions) {}

  async list(): Promise<Plan[]> {
    return guard(async () =>
      (
        await this.t.all<PlanRow>(
          'SELECT id, unlimited, limits::text AS limits, subscription, stripe_price, period_tokens, name, description FROM plans ORDER BY id',
        )
      ).map(toPlan),
    );
  }

  async get(id: string): Promise<Plan | undefined> {
    const row = await guard(() =>
      this.t.one<PlanRow>(
        'SELECT id, unlimited, limits::text AS limits, subscription, stripe_price, period_tokens, name, description FROM plans WHERE id = $1',
        [id],
      ),
    );
    return row && toPlan(row);
  }

  async put(plan: Plan, now: EpochSeconds, audit?: AuditEntry): Promise<void> {
    await this.t.tx(
      async (db) => {
        await insertPlan(plan, now, db);
        await writeAudit(audit, db);
      },
      () => ['all'],
    );
  }
}
