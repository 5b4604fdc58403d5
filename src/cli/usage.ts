/** @module `toolgate usage record`: meter a consumption through fair use, atomically, as a tool would. */
import { type Command, Option } from 'commander';
import { MAX_AMOUNT } from '../domain/fair-use.js';
import { CATEGORIES } from '../domain/plans.js';
import type { UsageAnswer } from '../service/usage.js';
import { wholeNumber } from './args.js';
import { withServices } from './context.js';
import { emit, JSON_HELP, type JsonOption, unwrap } from './output.js';
import { fairUseLines } from './render.js';

interface RecordOptions extends JsonOption {
  category: string;
  records?: number;
  requests?: number;
  idempotencyKey?: string;
}

export function registerUsage(program: Command): void {
  const usage = program.command('usage').description('meter usage against fair-use quotas');

  usage
    .command('record')
    .description('record a consumption: all of it or, if a window would pass its limit, none (exit 1)')
    .argument('<account-id>')
    .addOption(new Option('--category <category>', 'tool category').choices(CATEGORIES).makeOptionMandatory())
    .option('--records <n>', 'records returned (default 0)', wholeNumber('--records', 0, MAX_AMOUNT))
    .option('--requests <n>', 'requests made (default 1)', wholeNumber('--requests', 0, MAX_AMOUNT))
    .option('--idempotency-key <key>', 'the same key again is counted once and answers the same')
    .option('--json', JSON_HELP)
    .action(async (accountId: string, opts: RecordOptions) => {
      const { response, replayed } = await withServices(async (s) =>
        unwrap(
          await s.usage.record(
            accountId,
            {
              category: opts.category,
              records: opts.records,
              requests: opts.requests,
              idempotency_key: opts.idempotencyKey,
            },
            { audit: true },
          ),
        ),
      );
      emit(opts, response, () => describe(response, replayed, opts.idempotencyKey));
    });
}

function describe(a: UsageAnswer, replayed: boolean, key: string | undefined): string {
  const { records, requests } = a.recorded;
  const what = `${records} record${records === 1 ? '' : 's'}, ${requests} request${requests === 1 ? '' : 's'}`;
  const head = replayed
    ? `Already recorded under idempotency key "${key}" (${a.category}: ${what}); counted once. Windows as first recorded:`
    : `Recorded ${a.category} for ${a.account_id}: ${what}. Windows now:`;
  return [head, ...fairUseLines(a.fair_use)].join('\n');
}
