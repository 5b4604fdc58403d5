/**
 * @module Use cases on the plan catalogue. Plans leave here as operators see them: `subscription`
 * always present, null for a plan that is none (the store leaves it out, as it was written).
 */
import type { JsonValue } from '../domain/audit.js';
import { fail, ok, type Result } from '../domain/errors.js';
import { validatePeriodTokens } from '../domain/payments.js';
import {
  applyLimitAssignments,
  type Plan,
  type PlanLimits,
  validateLimits,
  validatePlanId,
} from '../domain/plans.js';
import { type AuditContext, draftAudit } from './audit.js';
import { now, type ServiceDeps } from './context.js';
import { checkPrice } from './payments.js';

/** How a plan's subscription is written by operators; null is none. */
export type Subscription = 'monthly' | null;

/** A plan as the admin API and the CLI show it: whether it is a subscription, and its price, always said. */
export interface PlanView {
  id: string;
  unlimited: boolean;
  limits: PlanLimits;
  subscription: Subscription;
  /** The recurring Stripe price that sells it; null: not for sale. */
  stripe_price: string | null;
  /** Tokens granted for each paid invoice of its subscription; null: none. */
  period_tokens: number | null;
  /** What customers see instead of the id; null: the id. */
  name: string | null;
  description: string | null;
}

const planView = (p: Plan): PlanView => ({
  id: p.id,
  unlimited: p.unlimited,
  limits: p.limits,
  subscription: p.subscription ?? null,
  stripe_price: p.stripePrice ?? null,
  period_tokens: p.periodTokens ?? null,
  name: p.name ?? null,
  description: p.description ?? null,
});

/** Text customers read (a name, a description): trimmed, of printable characters, not too long; '' or null is none. */
function checkText(value: unknown, member: string, max: number): Result<string | null> {
  if (value === null || value === undefined) return ok(null);
  if (typeof value !== 'string') return fail('invalid_arguments', `${member} must be a string or null.`);
  const text = value.trim();
  if (text === '') return ok(null);
  if (text.length > max) return fail('invalid_arguments', `${member} must be at most ${max} characters.`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(text))
    return fail('invalid_arguments', `${member} must not hold control characters.`);
  return ok(text);
}

/** A plan's display name (at most 60) and description (at most 300). */
function checkLabels(
  name: unknown,
  description: unknown,
): Result<{ name: string | null; description: string | null }> {
  const n = checkText(name, 'name', 60);
  if (!n.ok) return n;
  const d = checkText(description, 'description', 300);
  if (!d.ok) return d;
  return ok({ name: n.value, description: d.value });
}

/** What `plans set` may change besides the limits; what is left out stays as the plan has it. */
export interface PlanSettings {
  unlimited?: boolean | undefined;
  subscription?: Subscription | undefined;
  /** null: no longer for sale. */
  stripePrice?: string | null | undefined;
  periodTokens?: number | null | undefined;
  /** null or '': none (customers see the id). */
  name?: string | null | undefined;
  description?: string | null | undefined;
}

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
    settings: PlanSettings = {},
    by?: AuditContext,
  ): Promise<Result<PlanView>> {
    const valid = validatePlanId(id);
    if (!valid.ok) return valid;
    const { unlimited, subscription } = settings;
    const checked = checkSubscription(subscription);
    if (!checked.ok) return checked;
    const existing = await this.deps.store.plans.get(id);
    const limits = applyLimitAssignments(existing?.limits, assignments);
    if (!limits.ok) return limits;
    const sale = await this.sale(
      id,
      settings.stripePrice === undefined ? (existing?.stripePrice ?? null) : settings.stripePrice,
      settings.periodTokens === undefined ? (existing?.periodTokens ?? null) : settings.periodTokens,
      settings.stripePrice !== undefined && settings.stripePrice !== existing?.stripePrice,
    );
    if (!sale.ok) return sale;
    const labels = checkLabels(
      settings.name === undefined ? (existing?.name ?? null) : settings.name,
      settings.description === undefined ? (existing?.description ?? null) : settings.description,
    );
    if (!labels.ok) return labels;
    return this.save(
      {
        id,
        ...labels.value,
        unlimited: unlimited ?? existing?.unlimited ?? false,
        limits: limits.value,
        subscription: subscription === undefined ? (existing?.subscription ?? null) : checked.value,
        ...sale.value,
      },
      by,
    );
  }

  /** The plan's price (checked with Stripe when it is new to the plan) and its period tokens. */
  private async sale(
    id: string,
    stripePrice: unknown,
    periodTokens: unknown,
    newPrice: boolean,
  ): Promise<Result<{ stripe_price: string | null; period_tokens: number | null }>> {
    const tokens = validatePeriodTokens(periodTokens);
    if (!tokens.ok) return tokens;
    if (stripePrice === null || stripePrice === undefined)
      return ok({ stripe_price: null, period_tokens: tokens.value });
    const price = newPrice
      ? await checkPrice(this.deps, stripePrice, 'recurring', { plan: id })
      : ok(String(stripePrice));
    if (!price.ok) return price;
    return ok({ stripe_price: price.value, period_tokens: tokens.value });
  }

  /** API form: the whole plan (a subscription left out is none, as a replaced plan is whole). */
  async put(
    id: string,
    body: {
      unlimited?: unknown;
      limits?: unknown;
      subscription?: unknown;
      stripe_price?: unknown;
      period_tokens?: unknown;
      name?: unknown;
      description?: unknown;
    },
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
    const existing = await this.deps.store.plans.get(id);
    const sale = await this.sale(
      id,
      body.stripe_price ?? null,
      body.period_tokens ?? null,
      (body.stripe_price ?? null) !== (existing?.stripePrice ?? null),
    );
    if (!sale.ok) return sale;
    const labels = checkLabels(body.name, body.description);
    if (!labels.ok) return labels;
    return this.save(
      {
        id,
        ...labels.value,
        unlimited: body.unlimited ?? false,
        limits: limits.value as PlanLimits,
        subscription: subscription.value,
        ...sale.value,
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
      stripe_price: plan.stripe_price,
      period_tokens: plan.period_tokens,
      name: plan.name,
      description: plan.description,
    });
    await this.deps.store.plans.put(
      {
        id: plan.id,
        unlimited: plan.unlimited,
        limits: plan.limits,
        subscription: plan.subscription,
        stripePrice: plan.stripe_price,
        periodTokens: plan.period_tokens,
        name: plan.name,
        description: plan.description,
      },
      now(this.deps),
      audit,
    );
    return ok(plan);
  }
}
