/** @module The plan catalogue, shared by every server. */
import type { AuditEntry } from '../domain/audit.js';
import type { EpochSeconds } from '../domain/clock.js';
import type { Plan } from '../domain/plans.js';

export interface PlanStore {
  list(): Promise<Plan[]>;
  get(id: string): Promise<Plan | undefined>;
  /** Creates or replaces the plan. */
  put(plan: Plan, now: EpochSeconds, audit?: AuditEntry): Promise<void>;
}
