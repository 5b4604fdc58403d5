/** @module `toolgate accounts`: create, list, show, update. */
import { type Command, Option } from 'commander';
import { ACCOUNT_STATUSES } from '../domain/accounts.js';
import { MAX_TOKENS } from '../domain/ledger.js';
import { DEFAULT_PAGE, MAX_PAGE } from '../service/context.js';
import type { AdminAccountRecord } from '../service/views.js';
import { lowBalanceSetting, nonEmpty, unlimitedSetting, wholeNumber } from './args.js';
import { withAdmin } from './context.js';
import { oneShotCommand } from './one-shot.js';
import { balanceText, CliError, emit, JSON_HELP, type JsonOption } from './output.js';
import { accountBlock } from './render.js';
import { moreMayFollow, table } from './table.js';

export function registerAccounts(program: Command): void {
  const accounts = program.command('accounts').description('create, list, show and update accounts');

  accounts
    .command('create')
    .description('create an account (on the free plan unless --plan says otherwise)')
    .requiredOption('--name <name>', 'account name', nonEmpty('--name'))
    .option('--plan <id>', 'plan id (see: toolgate plans list)')
    .option('--unlimited', 'unlimited whatever the plan says')
    .option('--tokens <n>', 'opening token balance', wholeNumber('--tokens', 0, MAX_TOKENS))
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption & { name: string; plan?: string; unlimited?: true; tokens?: number }) => {
      const record = await withAdmin(opts, (a) =>
        a.accounts.create({
          name: opts.name,
          ...(opts.plan !== undefined ? { plan: opts.plan } : {}),
          ...(opts.unlimited !== undefined ? { unlimited: opts.unlimited } : {}),
          ...(opts.tokens !== undefined ? { tokens: opts.tokens } : {}),
        }),
      );
      emit(opts, record, () => `Created account ${record.id}.\n\n${accountBlock(record)}`);
    });

  accounts
    .command('list')
    .description('list accounts, oldest first, a page at a time')
    .option('--limit <n>', `how many (default ${DEFAULT_PAGE})`, wholeNumber('--limit', 1, MAX_PAGE))
    .option('--after <account-id>', 'start after this account (the last id of the previous page)')
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption & { limit?: number; after?: string }) => {
      const limit = opts.limit ?? DEFAULT_PAGE;
      const records = await withAdmin(opts, (a) => a.accounts.list({ limit, after: opts.after }));
      emit(opts, records, () => accountsTable(records, limit));
    });

  oneShotCommand(accounts, {
    name: 'show',
    description: 'show an account, with its fair-use windows',
    argument: '<account-id>',
    ask: (a, id) => a.accounts.get(id),
    text: accountBlock,
  });

  accounts
    .command('update')
    .description('change an account: name, plan, status (closing revokes every key), unlimited')
    .argument('<account-id>')
    .option('--name <name>', 'new name', nonEmpty('--name'))
    .option('--plan <id>', 'new plan id')
    .addOption(new Option('--status <status>', 'new status').choices(ACCOUNT_STATUSES))
    .option(
      '--unlimited <true|false|plan>',
      'unlimited whatever the plan says, or follow the plan',
      unlimitedSetting,
    )
    .option(
      '--low-balance <tokens|none>',
      'send tokens.low_balance when the balance falls below this',
      lowBalanceSetting,
    )
    .option('--json', JSON_HELP)
    .action(
      async (
        id: string,
        opts: JsonOption & {
          name?: string;
          plan?: string;
          status?: string;
          unlimited?: boolean | 'plan';
          lowBalance?: number | 'none';
        },
      ) => {
        const patch = {
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.plan !== undefined ? { plan: opts.plan } : {}),
          ...(opts.status !== undefined ? { status: opts.status } : {}),
          ...(opts.unlimited !== undefined
            ? { unlimited: opts.unlimited === 'plan' ? null : opts.unlimited }
            : {}),
          ...(opts.lowBalance !== undefined
            ? { low_balance: opts.lowBalance === 'none' ? null : opts.lowBalance }
            : {}),
        };
        if (Object.keys(patch).length === 0) {
          throw new CliError(
            'invalid_arguments',
            'Nothing to update: give --name, --plan, --status, --unlimited or --low-balance.',
          );
        }
        const record = await withAdmin(opts, (a) => a.accounts.update(id, patch));
        emit(opts, record, () => `Updated account ${record.id}.\n\n${accountBlock(record)}`);
      },
    );
}

function accountsTable(records: AdminAccountRecord[], limit: number): string {
  if (records.length === 0) return 'No accounts.';
  const out = table(
    // Left out rightmost first, before a name is cut: the counts (in `accounts show`), then the day made.
    [
      'id',
      'name',
      'plan',
      'status',
      'balance',
      { name: 'created', optional: true },
      { name: 'keys', optional: true },
      { name: 'users', optional: true },
    ],
    records.map((a) => [
      a.id,
      a.name,
      a.plan,
      a.status,
      balanceText(a.token_balance),
      a.created_at,
      a.api_key_count,
      a.user_count,
    ]),
  );
  const last = records[records.length - 1];
  return records.length === limit && last
    ? `${out}\n\n${moreMayFollow(`toolgate accounts list --limit ${limit} --after ${last.id}`)}`
    : out;
}
