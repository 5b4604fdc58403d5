/** @module `toolgate audit list`: the audit trail of admin actions (admin API, CLI, first run), oldest first. */
import type { Command } from 'commander';
import { DEFAULT_PAGE, MAX_PAGE } from '../service/context.js';
import type { AuditRecord } from '../service/views.js';
import { nonEmpty, wholeNumber } from './args.js';
import { withAdmin } from './context.js';
import { emit, JSON_HELP, type JsonOption, orDash } from './output.js';
import { moreMayFollow, table } from './table.js';

interface ListOptions extends JsonOption {
  account?: string;
  limit?: number;
  after?: string;
}

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('who changed what, and when');

  audit
    .command('list')
    .description('the audit trail, oldest first, a page at a time')
    .option('--account <account-id>', 'only the entries about this account', nonEmpty('--account'))
    .option('--limit <n>', `how many entries (default ${DEFAULT_PAGE})`, wholeNumber('--limit', 1, MAX_PAGE))
    .option('--after <entry-id>', 'start after this entry (the last id of the previous page)')
    .option('--json', JSON_HELP)
    .action(async (opts: ListOptions) => {
      const limit = opts.limit ?? DEFAULT_PAGE;
      const entries = await withAdmin(opts, (a) =>
        a.audit.list({
          limit,
          ...(opts.account !== undefined ? { accountId: opts.account } : {}),
          ...(opts.after !== undefined ? { after: opts.after } : {}),
        }),
      );
      emit(opts, entries, () => auditTable(entries, limit, opts.account));
    });
}

function auditTable(entries: AuditRecord[], limit: number, account: string | undefined): string {
  if (entries.length === 0) return account ? `No audit entries for account ${account}.` : 'No audit entries.';
  const out = table(
    // An id is for paging (the hint below has it whole); details are JSON, cut to a few characters useless.
    [
      'at',
      'actor',
      'action',
      'account',
      'target',
      { name: 'details', optional: true },
      { name: 'id', optional: true },
    ],
    entries.map((e) => [
      e.at,
      e.actor,
      e.action,
      orDash(e.account_id),
      orDash(e.target_id),
      JSON.stringify(e.details),
      e.id,
    ]),
  );
  const last = entries[entries.length - 1];
  const filter = account ? ` --account ${account}` : '';
  return entries.length === limit && last
    ? `${out}\n\n${moreMayFollow(`toolgate audit list${filter} --limit ${limit} --after ${last.id}`)}`
    : out;
}
