/** @module get_usage: the calling account's calls, tokens and amounts by unit per UTC day over a period; free. */
import Type from 'typebox';
import { ApiError } from '../domain/api-error.js';
import { USAGE_PERIODS } from '../domain/usage-history.js';
import type { AccountTool } from './tool.js';

const Counts = {
  calls: Type.Integer(),
  tokens: Type.Integer(),
  records: Type.Integer({ description: 'The amounts of tools metered in records' }),
  units: Type.Optional(
    Type.Record(Type.String(), Type.Integer(), {
      description: 'The amounts of tools metered in another unit, by unit ({"pages": 40}); absent when none',
    }),
  ),
  with_data: Type.Integer(),
  without_data: Type.Integer(),
  failed: Type.Integer(),
};

export const getUsage: AccountTool = {
  kind: 'account',
  name: 'get_usage',
  summary: "The calling account's usage per day",
  description:
    'Returns one row per UTC day of the period (days without calls included): calls, tokens, records, ' +
    'the amounts of tools metered in another unit by unit (units, such as {"pages": 40}, where there ' +
    'were), calls with data, calls without data and failed calls, with totals and the token balance. ' +
    'period: today (default), week (7 days ending today), month (30), billing_cycle (the current ' +
    'subscription period, or month without one). Free.',
  args: Type.Object(
    // One enum, not a union of constants: a wrong value is told the allowed ones, not the first.
    { period: Type.Optional(Type.Enum([...USAGE_PERIODS])) },
    { additionalProperties: false },
  ),
  response: Type.Object({
    results: Type.Object({
      period: Type.Union(USAGE_PERIODS.map((p) => Type.Literal(p))),
      start_date: Type.String(),
      end_date: Type.String(),
      token_balance: Type.Integer(),
      days: Type.Array(Type.Object({ date: Type.String(), ...Counts })),
      totals: Type.Object(Counts),
    }),
    status: Type.Literal('ok'),
    metadata: Type.Object({ tokens_charged: Type.Integer(), tokens_remaining: Type.Integer() }),
  }),
  async run(ctx, args) {
    const snapshot = await ctx.deps.reads.getSnapshot(ctx.accountId);
    if (!snapshot) throw new ApiError('invalid_api_key');
    const period = (args as { period?: (typeof USAGE_PERIODS)[number] }).period ?? 'today';
    const results = await ctx.deps.billing.usage(snapshot, period);
    return {
      results,
      status: 'ok' as const,
      metadata: { tokens_charged: 0, tokens_remaining: results.token_balance },
    };
  },
};
