/** @module `toolgate plans`: the plan catalogue, and changing a plan's limits and subscription. */
import { type Command, InvalidArgumentError } from 'commander';
import { parseSlot, planSlots, slotName } from '../domain/plans.js';
import type { PlanSettings, PlanView } from '../service/plans.js';
import { withAdmin } from './context.js';
import { emit, JSON_HELP, type JsonOption, table } from './output.js';

export function registerPlans(program: Command): void {
  const plans = program.command('plans').description('list plans; create or change one');

  plans
    .command('list')
    .description('the plan catalogue and its fair-use limits')
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption) => {
      const list = await withAdmin(opts, (a) => a.plans.list());
      emit(opts, list, () => (list.length === 0 ? 'No plans.' : plansTable(list)));
    });

  plans
    .command('set')
    .description(
      'create a plan or change some limits of an existing one; a plan metering enrich or search names all six default limits',
    )
    .argument('<plan-id>')
    .argument(
      '[limits...]',
      '<category>.<unit>.<window>=<n> such as enrich.records.5h=1000 or scrape.pages.1d=2000 (window <n>m, h, d or w); =none removes one',
    )
    .option('--unlimited', 'accounts on this plan are unlimited (no token charges)')
    .option('--no-unlimited', 'accounts on this plan pay tokens')
    .option(
      '--subscription <kind>',
      'monthly (billed monthly from when an account joins) or none (default for a new plan)',
      subscriptionSetting,
    )
    .option(
      '--stripe-price <price>',
      'the recurring Stripe price that sells the plan (price_…, checked with Stripe), or none: not for sale',
    )
    .option(
      '--period-tokens <n>',
      'tokens granted for each paid invoice of its subscription (none: no grant)',
      periodTokens,
    )
    .option('--name <name>', 'what customers see instead of the id (the console); "" for none')
    .option('--description <text>', 'a line customers read about the plan; "" for none')
    .option('--json', JSON_HELP)
    .action(async (id: string, limits: string[], opts: PlanSetOptions) => {
      const settings: PlanSettings = {
        unlimited: opts.unlimited,
        subscription: opts.subscription === 'none' ? null : opts.subscription,
        stripePrice: opts.stripePrice === 'none' ? null : opts.stripePrice,
        periodTokens: opts.periodTokens === 'none' ? null : opts.periodTokens,
        name: opts.name,
        description: opts.description,
      };
      const plan = await withAdmin(opts, (a) => a.plans.set(id, limits, settings));
      emit(opts, plan, () => `Saved plan ${plan.id}.\n\n${plansTable([plan])}${saleLine(plan)}`);
    });
}

type PlanSetOptions = JsonOption & {
  unlimited?: boolean;
  subscription?: 'monthly' | 'none';
  stripePrice?: string;
  periodTokens?: number | 'none';
  name?: string;
  description?: string;
};

/** A whole number of tokens, or none. */
function periodTokens(value: string): number | 'none' {
  if (value.trim().toLowerCase() === 'none') return 'none';
  if (!/^[0-9]{1,13}$/.test(value.trim()))
    throw new InvalidArgumentError('--period-tokens must be a whole number or none.');
  return Number(value);
}

const saleLine = (p: PlanView) =>
  p.stripe_price
    ? `\n\nSold at Stripe price ${p.stripe_price}${p.period_tokens ? `, granting ${p.period_tokens} tokens per paid period` : ''}.`
    : '';

/** `monthly` or `none`; the word stays (a parser's null becomes '' in commander), mapped to null by the action. */
function subscriptionSetting(value: string): 'monthly' | 'none' {
  switch (value.trim().toLowerCase()) {
    case 'monthly':
      return 'monthly';
    case 'none':
      return 'none';
    default:
      throw new InvalidArgumentError('--subscription must be monthly or none.');
  }
}

/**
 * The defaults' columns as the seed system shows them ('-' where a plan has none), then a line per
 * plan with meters of the operator's own (kept out of the table, whose columns are cut to fit).
 */
function plansTable(list: PlanView[]): string {
  const limit = (p: PlanView, c: string, u: string, w: string) => p.limits[c]?.[u]?.[w] ?? '-';
  const others = list
    .map((p) => ({
      id: p.id,
      meters: planSlots(p.limits)
        .filter((slot) => !parseSlot(slotName(slot)))
        .map((slot) => `${slotName(slot)}=${limit(p, slot.category, slot.unit, slot.window)}`),
    }))
    .filter((o) => o.meters.length > 0);
  const defaults = table(
    [
      'plan',
      'unlimited',
      'subscription',
      'enrich records 5h/1w',
      'enrich requests 5h',
      'search records 5h/1w',
      'search requests 5h',
    ],
    list.map((p) => [
      p.id,
      p.unlimited ? 'yes' : 'no',
      p.subscription ?? 'none',
      `${limit(p, 'enrich', 'records', '5h')}/${limit(p, 'enrich', 'records', '1w')}`,
      limit(p, 'enrich', 'requests', '5h'),
      `${limit(p, 'search', 'records', '5h')}/${limit(p, 'search', 'records', '1w')}`,
      limit(p, 'search', 'requests', '5h'),
    ]),
  );
  if (others.length === 0) return defaults;
  const width = Math.max(...others.map((o) => o.id.length));
  const lines = others.map((o) => `  ${o.id.padEnd(width)}  ${o.meters.join('  ')}`);
  return `${defaults}\n\nMeters of their own:\n${lines.join('\n')}`;
}
