/**
 * @module Use cases on the plan catalogue. Plans leave here as operators see them: `subscription`
 * always present, null for a plan that is none (the store leaves it out, as it was written).
 */
import type { JsonValue } from '../domain/audit.js';
import { fail, ok, type Result } from '../domain/errors.js';
import {
  applyLimitAssignments,
  type Plan,
  type PlanLimits,
  validateLimits,
  validatePlanId,
} from '../domain/plans.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';

/** How a plan's subscription is written by operators; null is none. */
export type Subscription = 'monthly' | null;

/** A plan as the admin API and the CLI show it: whether it is a subscription always said. */
export type PlanView = Plan & { subscription: Subscription };

const planView = (p: Plan): PlanView => ({ ...p, subscription: p.subscription ?? null });

/** `monthly`, or null/absent for none; anything else is refused before it reaches the store. */
function checkSubscription(value: unknown): Result<Subscription> {
  if (value === undefined || value === null) return ok(null);
  return value === 'monthly'
    ? ok('monthly')
    : fail('invalid_arguments', 'subscription must be "monthly" or null.');
}

export class PlanService {
  constructor(private readonly deps: ServiceDeps) {}

  async list(): Promise<PlanView[]> {
    return (await this.deps.store.plans.list()).map(planView);
  }

  async get(id: string): Promise<Result<PlanView>> {
    const plan = await this.deps.store.plans.get(id);
    return plan ? ok(planView(plan)) : fail('not_found', `No plan "${id}".`);
  }

  /**
   * CLI form: `enrich.records.5h=1000 ...` on top of the existing plan (a new plan names every
   * window); whatever is not given (unlimited, subscription) stays as the plan has it, or is
   * off for a new plan.
   */
  async set(
    id: string,
    assignments: string[],
    unlimited?: boolean,
    subscription?: Subscription,
    by?: AuditContext,
  ): Promise<Result<PlanView>> {
    const valid = validatePlanId(id);
    if (!valid.ok) return valid;
    const checked = checkSubscription(subscription);
    if (!checked.ok) return checked;
    const existing = await this.deps.store.plans.get(id);
    const limits = applyLimitAssignments(existing?.limits, assignments);
    if (!limits.ok) return limits;
    return this.save(
      {
        id,
        unlimited: unlimited ?? existing?.unlimited ?? false,
        limits: limits.value,
        subscription: subscription === undefined ? (existing?.subscription ?? null) : checked.value,
      },
      by,
    );
  }

  /** API form: the whole plan (a subscription left out is none, as a replaced plan is whole). */
  async put(
    id: string,
    body: { unlimited?: unknown; limits?: unknown; subscription?: unknown },
    by?: AuditContext,
  ): Promise<Result<PlanView>> {
    const valid = validatePlanId(id);
    if (!valid.ok) return valid;
    if (body.unlimited !== undefined && typeof body.unlimited !== 'boolean') {
      return fail('invalid_arguments', 'unlimited must be true or false.');
    }
    const subscription = checkSubscription(body.subscription);
    if (!subscription.ok) return subscription;
    const limits = validateLimits(body.limits);
    if (!limits.ok) return limits;
    return this.save(
      {
        id,
        unlimited: body.unlimited ?? false,
        limits: limits.value as PlanLimits,
        subscription: subscription.value,
      },
      by,
    );
  }

  private async save(plan: PlanView, by: AuditContext | undefined): Promise<Result<PlanView>> {
    const audit = draftAudit(this.deps, by, 'plan.put', null, plan.id, {
      unlimited: plan.unlimited,
      // PlanLimits is plain JSON (numbers in nested objects); its interface type just lacks an index signature.
      limits: plan.limits as unknown as JsonValue,
      subscription: plan.subscription,
    });
    await this.deps.store.plans.put(plan, now(this.deps), audit);
    return ok(plan);
  }
}
