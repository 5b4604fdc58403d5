/**
 * @module Billing: plan, subscription and its current period, balance, and what each tool costs,
 * as get_billing answers them (the same service call, with the served tools' costs).
 */
import type { FastifyInstance } from 'fastify';
import { accountPage, type ConsolePageDeps, notFound } from '../context.js';

export async function billingPage(app: FastifyInstance, deps: ConsolePageDeps): Promise<void> {
  accountPage(app, deps, { path: 'billing', current: 'Billing', template: 'billing' }, async (accountId) => {
    const snapshot = await deps.uses.reads.getSnapshot(accountId);
    if (!snapshot) throw notFound();
    const billing = deps.uses.billing.billing(snapshot, deps.tokenCosts());
    const costs = Object.entries(billing.token_cost_details)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([tool, c]) => ({ tool, perCall: c.per_call, perRecord: c.per_record }));
    return { billing, costs };
  });
}
