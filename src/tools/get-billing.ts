/** @module get_billing: the calling account's plan, subscription and period, balance and every tool's cost; free. */
import Type from 'typebox';
import { ApiError } from '../domain/api-error.js';
import { SUBSCRIPTION_STATUSES } from '../domain/payments.js';
import type { AccountTool } from './tool.js';

const Iso = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const getBilling: AccountTool = {
  kind: 'account',
  name: 'get_billing',
  summary: "The calling account's billing",
  description:
    "Returns the plan, the subscription status and current period (a Stripe subscription's own status " +
    'and period; else a plan billed monthly runs from when the account joined it; otherwise status none ' +
    'and no dates), the token balance (-1 when unlimited) ' +
    'and what each tool costs in tokens (token_costs: per unit counted where it charges per unit, else ' +
    "per call; token_cost_details: both, and the unit per_record is per: records, or the tool's own " +
    'such as pages). Free.',
  args: Type.Object({}, { additionalProperties: false, description: 'No arguments: send {}' }),
  response: Type.Object({
    results: Type.Object({
      plan: Type.String(),
      subscription_status: Type.Union(
        [...new Set(['active', 'suspended', 'closed', 'none', ...SUBSCRIPTION_STATUSES])].map((s) =>
          Type.Literal(s),
        ),
      ),
      token_balance: Type.Integer(),
      unlimited: Type.Boolean(),
      current_period_start: Iso,
      current_period_end: Iso,
      token_costs: Type.Record(Type.String(), Type.Integer(), {
        description: 'Per tool: tokens per unit counted where it charges per unit, else per call',
      }),
      token_cost_details: Type.Record(
        Type.String(),
        Type.Object({
          per_call: Type.Integer(),
          per_record: Type.Integer({ description: 'Tokens per unit counted (per record, per page...)' }),
          unit: Type.String({
            description: "The unit per_record is per: records, or the tool's own (pages)",
          }),
        }),
        {
          description:
            'Per tool: tokens per call (a hit) and per unit counted, both may apply, and that unit',
        },
      ),
    }),
    status: Type.Literal('ok'),
    metadata: Type.Object({ tokens_charged: Type.Integer(), tokens_remaining: Type.Integer() }),
  }),
  async run(ctx) {
    const snapshot = await ctx.deps.reads.getSnapshot(ctx.accountId);
    if (!snapshot) throw new ApiError('invalid_api_key');
    const results = ctx.deps.billing.billing(snapshot, ctx.deps.tokenCosts());
    return {
      results,
      status: 'ok' as const,
      metadata: { tokens_charged: 0, tokens_remaining: results.token_balance },
    };
  },
};
