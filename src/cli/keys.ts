/** @module `toolgate keys`: create (the key is printed once), list (hints only), revoke. */
import type { Command } from 'commander';
import type { KeyRecord } from '../service/keys.js';
import { withAdmin } from './context.js';
import { oneShotCommand } from './one-shot.js';
import { emit, JSON_HELP, type JsonOption, orDash } from './output.js';
import { type PageOptions, pageOf, withNextPage, withPageOptions } from './paging.js';
import { table } from './table.js';

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('create, list and revoke API keys');

  keys
    .command('create')
    .description('create an API key for an account; the key is printed now and never again')
    .argument('<account-id>')
    .option('--name <label>', 'a label for the key')
    .option('--json', JSON_HELP)
    .action(async (accountId: string, opts: JsonOption & { name?: string }) => {
      const created = await withAdmin(opts, (a) => a.keys.create(accountId, opts.name));
      const { id, key, ...rest } = created;
      emit(opts, { id, key, ...rest }, () =>
        [
          `Created key ${id} for account ${created.account_id}${created.name ? ` (${created.name})` : ''}.`,
          'This is the only time the key is shown; store it now:',
          '',
          `  ${key}`,
        ].join('\n'),
      );
    });

  withPageOptions(
    keys
      .command('list')
      .description(
        "list an account's keys and OAuth grants (key column 'oauth grant'), oldest first (hints only: keys are not stored)",
      )
      .argument('<account-id>'),
    'key-id',
  )
    .option('--json', JSON_HELP)
    .action(async (accountId: string, opts: JsonOption & PageOptions) => {
      const list = pageOf(await withAdmin(opts, (a) => a.keys.list(accountId)), byId, opts);
      emit(opts, list, () =>
        list.length === 0
          ? `Account ${accountId} has no keys${opts.after ? ` after ${opts.after}` : ''}.`
          : withNextPage(keysTable(list), list, byId, opts, `toolgate keys list ${accountId}`),
      );
    });

  oneShotCommand(keys, {
    name: 'revoke',
    description: 'revoke a key; it stops working on the next request',
    argument: '<key-id>',
    ask: (a, keyId) => a.keys.revoke(keyId),
    text: (key) => `Revoked key ${key.id} (${key.hint}) of account ${key.account_id} at ${key.revoked_at}.`,
  });
}

const byId = (item: { id: string }) => item.id;

function keysTable(list: KeyRecord[]): string {
  if (list.length === 0) return '';
  return table(
    ['id', 'name', 'key', 'status', 'created', 'last used'],
    list.map((k) => [k.id, orDash(k.name), k.hint, k.status, k.created_at, orDash(k.last_used_at)]),
  );
}
