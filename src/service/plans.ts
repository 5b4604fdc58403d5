/** @module Use cases on the plan catalogue. */
import type { JsonValue } from '../domain/audit.js';
import { fail, ok, type Result } from '../domain/errors.js';
import {
  applyLimitAssignments,
  type Plan,
  type PlanLimits,
  validateLimits,
  validatePlanId,
} from '../domain/plans.js';
import { draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';

export class PlanService {
  constructor(private readonly deps: ServiceDeps) {}

  list(): Promise<Plan[]> {
    return this.deps.store.listPlans();
  }

  async get(id: string): Promise<Result<Plan>> {
    const plan = await this.deps.store.getPlan(id);
    return plan ? ok(plan) : fail('not_found', `No plan "${id}".`);
  }

  /** CLI form: `enrich.records.5h=1000 ...` on top of the existing plan (a new plan names every window). */
  async set(id: string, assignments: string[], unlimited?: boolean): Promise<Result<Plan>> {
    const valid = validatePlanId(id);
    if (!valid.ok) return valid;
    const existing = await this.deps.store.getPlan(id);
    const limits = applyLimitAssignments(existing?.limits, assignments);
    if (!limits.ok) return limits;
    return this.save({ id, unlimited: unlimited ?? existing?.unlimited ?? false, limits: limits.value });
  }

  /** API form: the whole plan. */
  async put(id: string, body: { unlimited?: unknown; limits?: unknown }): Promise<Result<Plan>> {
    const valid = validatePlanId(id);
    if (!valid.ok) return valid;
    if (body.unlimited !== undefined && typeof body.unlimited !== 'boolean') {
      return fail('invalid_arguments', 'unlimited must be true or false.');
    }
    const limits = validateLimits(body.limits);
    if (!limits.ok) return limits;
    return this.save({ id, unlimited: body.unlimited ?? false, limits: limits.value as PlanLimits });
  }

  private async save(plan: Plan): Promise<Result<Plan>> {
    const audit = draftAudit(this.deps, 'plan.put', null, plan.id, {
      unlimited: plan.unlimited,
      // PlanLimits is plain JSON (numbers in nested objects); its interface type just lacks an index signature.
      limits: plan.limits as unknown as JsonValue,
    });
    await this.deps.store.putPlan(plan, now(this.deps), audit);
    return ok(plan);
  }
}
