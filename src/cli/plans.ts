/** @module `toolgate plans`: the plan catalogue, and changing a plan's limits and subscription. */
import { type Command, InvalidArgumentError } from 'commander';
import type { PlanView, Subscription } from '../service/plans.js';
import { withServices } from './context.js';
import { emit, JSON_HELP, type JsonOption, table, unwrap } from './output.js';

export function registerPlans(program: Command): void {
  const plans = program.command('plans').description('list plans; create or change one');

  plans
    .command('list')
    .description('the plan catalogue and its fair-use limits')
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption) => {
      const list = await withServices((s) => s.plans.list());
      emit(opts, list, () => (list.length === 0 ? 'No plans.' : plansTable(list)));
    });

  plans
    .command('set')
    .description('create a plan (naming every limit) or change some limits of an existing one')
    .argument('<plan-id>')
    .argument('[limits...]', 'limits such as enrich.records.5h=1000 search.requests.5h=2500')
    .option('--unlimited', 'accounts on this plan are unlimited (no token charges)')
    .option('--no-unlimited', 'accounts on this plan pay tokens')
    .option(
      '--subscription <kind>',
      'monthly (billed monthly from when an account joins) or none (default for a new plan)',
      subscriptionSetting,
    )
    .option('--json', JSON_HELP)
    .action(
      async (
        id: string,
        limits: string[],
        opts: JsonOption & { unlimited?: boolean; subscription?: 'monthly' | 'none' },
      ) => {
        const subscription: Subscription | undefined =
          opts.subscription === 'none' ? null : opts.subscription;
        const plan = await withServices(async (s) =>
          unwrap(await s.plans.set(id, limits, opts.unlimited, subscription)),
        );
        emit(opts, plan, () => `Saved plan ${plan.id}.\n\n${plansTable([plan])}`);
      },
    );
}

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

function plansTable(list: PlanView[]): string {
  return table(
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
      `${p.limits.enrich.records['5h']}/${p.limits.enrich.records['1w']}`,
      p.limits.enrich.requests['5h'],
      `${p.limits.search.records['5h']}/${p.limits.search.records['1w']}`,
      p.limits.search.requests['5h'],
    ]),
  );
}
