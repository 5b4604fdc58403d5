/**
 * @module Billing: plan, subscription and its current period, balance, and what each tool costs,
 * as get_billing answers them; and, with payments on, what the account can buy. Owners act (each
 * button makes a Stripe Checkout or portal session and answers 303 to it); members see. A plan
 * change of an account already subscribed goes to Stripe as a subscription update: the plan
 * changes when Stripe's event says so, never by this page alone.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { unitSingular } from '../../domain/plans.js';
import { allowFormAction } from '../../http/web-headers.js';
import type { TokenCost } from '../../service/billing.js';
import { billingUrl } from '../../service/payments.js';
import {
  ACCOUNT_PARAMS,
  type AccountParams,
  accountGuard,
  accountOf,
  accountThingParams,
  type ConsolePageDeps,
  notFound,
  PageError,
  planLabel,
  renderAccountPage,
} from '../context.js';

/** What the page says on coming back (`?checkout=…`, `?changed=<plan>`). */
const RETURNS: Record<string, string> = {
  success:
    'Thank you: the payment went through. Your plan or tokens appear here as soon as Stripe confirms it.',
  cancel: 'Checkout was cancelled: nothing was charged.',
};

type BillingQuery = { checkout?: string; changed?: string };

/**
 * What each tool costs, its unit named: a column "Per record" (or "Per page") when every tool that
 * charges by the amount counts the same unit, else "Per unit counted" with the unit in each cell.
 */
export function costsView(details: Record<string, TokenCost>) {
  const tools = Object.entries(details).sort(([a], [b]) => (a < b ? -1 : 1));
  const charged = [
    ...new Set(tools.filter(([, c]) => c.per_record > 0).map(([, c]) => unitSingular(c.unit))),
  ];
  const one = charged.length <= 1 ? (charged[0] ?? 'record') : null;
  const costs = tools.map(([tool, c]) => ({
    tool,
    perCall: c.per_call,
    perUnit:
      one !== null || c.per_record === 0
        ? String(c.per_record)
        : `${c.per_record} per ${unitSingular(c.unit)}`,
  }));
  return {
    costs,
    perUnitHeading: one !== null ? `Per ${one}` : 'Per unit counted',
    costsCaption: `Tokens charged per call and per ${one ?? charged.join(' or ')} returned`,
  };
}

async function billingView(
  deps: ConsolePageDeps,
  request: FastifyRequest<{ Params: AccountParams; Querystring: BillingQuery }>,
  reply: FastifyReply,
  error: string | null = null,
  status = 200,
) {
  const { accountId } = accountOf(request).membership;
  const snapshot = await deps.uses.reads.getSnapshot(accountId);
  if (!snapshot) throw notFound();
  const billing = deps.uses.billing.billing(snapshot, deps.tokenCosts());
  const costs = costsView(billing.token_cost_details);
  const offers = await deps.uses.payments.offers(accountId);
  if (offers.ok && (offers.value.plans.length > 0 || offers.value.topups.length > 0 || offers.value.customer))
    allowFormAction(reply, deps.uses.payments.pageOrigins());
  const q = request.query ?? {};
  const changed = typeof q.changed === 'string' && /^[a-z0-9_-]{1,64}$/.test(q.changed) ? q.changed : null;
  const returned = changed
    ? `Your change to plan ${changed} was sent to Stripe: the plan changes here once Stripe confirms it.`
    : (RETURNS[q.checkout ?? ''] ?? null);
  return renderAccountPage(
    request,
    reply,
    'Billing',
    'billing',
    {
      billing,
      plan: await planLabel(deps, billing.plan),
      ...costs,
      offers: offers.ok ? offers.value : null,
      returned,
      error,
    },
    status,
  );
}

export async function billingPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  const page = { schema: { hide: true, params: ACCOUNT_PARAMS } };
  const owners = { ...page, preHandler: accountGuard(deps, true) };
  const thing = (name: string) => ({
    schema: { hide: true, params: accountThingParams(name) },
    preHandler: accountGuard(deps, true),
  });

  app.get<{ Params: AccountParams; Querystring: BillingQuery }>(
    '/a/:accountId/billing',
    { ...page, preHandler: accountGuard(deps) },
    (request, reply) => billingView(deps, request, reply),
  );

  const back = (accountId: string) => billingUrl(deps.publicUrl(), accountId);
  const go = async (
    request: FastifyRequest<{ Params: AccountParams; Querystring: BillingQuery }>,
    reply: FastifyReply,
    what: { plan: string } | { topup: string },
  ) => {
    const { accountId } = accountOf(request).membership;
    const url = back(accountId);
    const made = await deps.uses.payments.checkout(accountId, what, {
      success: `${url}?checkout=success`,
      cancel: `${url}?checkout=cancel`,
    });
    if (!made.ok) {
      if (made.error.code === 'not_found') throw notFound();
      return billingView(
        deps,
        request,
        reply,
        made.error.message,
        made.error.code === 'upstream_error' ? 502 : 409,
      );
    }
    if ('changed' in made.value)
      return reply.redirect(`${url}?changed=${encodeURIComponent(made.value.changed)}`, 303);
    return reply.redirect(made.value.url, 303);
  };

  app.post<{ Params: AccountParams & { plan: string }; Querystring: BillingQuery }>(
    '/a/:accountId/billing/subscribe/:plan',
    thing('plan'),
    (request, reply) => go(request, reply, { plan: request.params.plan }),
  );

  app.post<{ Params: AccountParams & { pack: string }; Querystring: BillingQuery }>(
    '/a/:accountId/billing/buy/:pack',
    thing('pack'),
    (request, reply) => go(request, reply, { topup: request.params.pack }),
  );

  app.post<{ Params: AccountParams; Querystring: BillingQuery }>(
    '/a/:accountId/billing/portal',
    owners,
    async (request, reply) => {
      const { accountId } = accountOf(request).membership;
      const url = await deps.uses.payments.portal(accountId, back(accountId));
      if (!url.ok) {
        if (url.error.code === 'not_found') throw notFound();
        if (url.error.code === 'conflict') throw new PageError(409, url.error.message);
        return billingView(deps, request, reply, url.error.message, 502);
      }
      return reply.redirect(url.value, 303);
    },
  );
}
