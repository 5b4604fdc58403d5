/** @module `toolgate plans`: the plan catalogue, and changing a plan's limits and subscription. */
import { type Command, InvalidArgumentError } from 'commander';
import { type MeterSlot, planSlots, slotName, WINDOW_SLOTS } from '../domain/plans.js';
import type { PlanSettings, PlanView } from '../service/plans.js';
import { withAdmin } from './context.js';
import { emit, JSON_HELP, type JsonOption, orDash } from './output.js';
import { outputWidth, table } from './table.js';

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
 * Each meter's limit in each plan ('-' where the plan has no such meter): the defaults' meters
 * first, in their order, then the operator's own in the plans' order.
 */
function limitRows(list: PlanView[]): string[][] {
  const slots = new Map<string, MeterSlot>();
  for (const p of list) for (const slot of planSlots(p.limits)) slots.set(slotName(slot), slot);
  const rank = (slot: MeterSlot) => {
    const i = WINDOW_SLOTS.findIndex((d) => slotName(d) === slotName(slot));
    return i < 0 ? WINDOW_SLOTS.length : i;
  };
  // A stable sort: the operator's own keep the order they came in.
  const ordered = [...slots.values()].sort((a, b) => rank(a) - rank(b));
  return ordered.map(({ category, unit, window }) => [
    `${category} ${unit} ${window}`,
    ...list.map((p) => String(p.limits[category]?.[unit]?.[window] ?? '-')),
  ]);
}

/**
 * The plans' limits, one row per meter and one column per plan, as a price list compares tiers:
 * plans side by side as many as fit `room`, the next ones in a table of their own under it.
 */
function limitsTables(list: PlanView[], room: number): string[] {
  const rows = limitRows(list);
  const labelWidth = Math.max('limit'.length, ...rows.map((r) => r[0]!.length));
  const widthOf = (i: number) => Math.max(list[i]!.id.length, ...rows.map((r) => r[i + 1]!.length));
  const groups: number[][] = [];
  let used = 0;
  list.forEach((_, i) => {
    if (groups.length === 0 || used + 2 + widthOf(i) > room) {
      groups.push([]);
      used = labelWidth;
    }
    groups[groups.length - 1]!.push(i);
    used += 2 + widthOf(i);
  });
  return groups.map((g) =>
    table(
      ['limit', ...g.map((i) => ({ name: list[i]!.id, keepCase: true }))],
      rows.map((r) => [r[0]!, ...g.map((i) => r[i + 1]!)]),
      room,
    ),
  );
}

/**
 * The plans, one row each, then their limits (limitsTables). Plan ids stay as they are typed: the
 * limits tables name their columns by them, lower case.
 */
function plansTable(list: PlanView[], room: number = outputWidth()): string {
  const plans = table(
    ['plan', 'unlimited', 'subscription', 'stripe price', 'period tokens'],
    list.map((p) => [
      p.id,
      p.unlimited ? 'yes' : 'no',
      p.subscription ?? 'none',
      orDash(p.stripe_price),
      p.period_tokens === null ? '-' : p.period_tokens,
    ]),
    room,
  );
  return [plans, ...limitsTables(list, room)].join('\n\n');
}
