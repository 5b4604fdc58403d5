/** @module `toolgate topups`: token packs sold through Stripe (a one-time price grants a number of tokens). */
import { type Command, InvalidArgumentError } from 'commander';
import type { TopupView } from '../service/payments.js';
import { withAdmin } from './context.js';
import { oneShotCommand } from './one-shot.js';
import { emit, JSON_HELP, type JsonOption } from './output.js';
import { table } from './table.js';

export function registerTopups(program: Command): void {
  const topups = program.command('topups').description('token packs customers buy through Stripe');

  topups
    .command('list')
    .description('the packs for sale: tokens and the Stripe price of each')
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption) => {
      const list = await withAdmin(opts, (a) => a.topups.list());
      emit(opts, list, () => (list.length === 0 ? 'No packs.' : topupsTable(list)));
    });

  topups
    .command('set')
    .description('create or change a pack; its price must be a one-time Stripe price (checked with Stripe)')
    .argument('<pack-id>')
    .requiredOption('--tokens <n>', 'tokens granted when the pack is paid', wholeTokens)
    .requiredOption('--stripe-price <price>', 'the one-time Stripe price that sells it (price_…)')
    .option('--json', JSON_HELP)
    .action(async (id: string, opts: JsonOption & { tokens: number; stripePrice: string }) => {
      const pack = await withAdmin(opts, (a) =>
        a.topups.set(id, { tokens: opts.tokens, stripe_price: opts.stripePrice }),
      );
      emit(
        opts,
        pack,
        () => `Saved pack ${pack.id}: ${pack.tokens} tokens at Stripe price ${pack.stripe_price}.`,
      );
    });

  oneShotCommand(topups, {
    name: 'remove',
    description: 'stop selling a pack (tokens already granted stay; a refund of it still takes them back)',
    argument: '<pack-id>',
    ask: (a, id) => a.topups.remove(id),
    text: (pack) => `Removed pack ${pack.id}.`,
  });
}

function wholeTokens(value: string): number {
  if (!/^[1-9][0-9]{0,12}$/.test(value.trim()))
    throw new InvalidArgumentError('--tokens must be a whole number from 1.');
  return Number(value);
}

const topupsTable = (list: TopupView[]) =>
  table(
    ['pack', 'tokens', 'stripe price', 'updated'],
    list.map((t) => [t.id, t.tokens, t.stripe_price, t.updated_at]),
  );
