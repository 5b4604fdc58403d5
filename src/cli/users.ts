/** @module `toolgate users`: add, list, change the role of, and remove the users of an account. */
import { type Command, Option } from 'commander';
import { USER_ROLES } from '../domain/users.js';
import { withAdmin } from './context.js';
import { oneShotCommand } from './one-shot.js';
import { emit, JSON_HELP, type JsonOption } from './output.js';
import { type PageOptions, pageOf, withNextPage, withPageOptions } from './paging.js';
import { table, wrap } from './table.js';

export function registerUsers(program: Command): void {
  const users = program
    .command('users')
    .description('add, list, change the role of and remove the users of an account');

  users
    .command('add')
    .description('add a user to an account')
    .argument('<account-id>')
    .requiredOption('--email <email>', "the user's email address")
    .addOption(new Option('--role <role>', 'role').choices(USER_ROLES).default('member'))
    .option('--json', JSON_HELP)
    .action(async (accountId: string, opts: JsonOption & { email: string; role: string }) => {
      const user = await withAdmin(opts, (a) => a.users.add(accountId, opts.email, opts.role));
      emit(
        opts,
        user,
        () => `Added user ${user.id} ${user.email} (${user.role}) to account ${user.account_id}.`,
      );
    });

  withPageOptions(
    users.command('list').description("list an account's users, oldest first").argument('<account-id>'),
    'user-id',
  )
    .option('--json', JSON_HELP)
    .action(async (accountId: string, opts: JsonOption & PageOptions) => {
      const list = pageOf(await withAdmin(opts, (a) => a.users.list(accountId)), byId, opts);
      emit(opts, list, () =>
        list.length === 0
          ? `Account ${accountId} has no users${opts.after ? ` after ${opts.after}` : ''}.`
          : withNextPage(
              table(
                ['id', 'email', 'role', 'created'],
                list.map((u) => [u.id, u.email, u.role, u.created_at]),
              ),
              list,
              byId,
              opts,
              `toolgate users list ${accountId}`,
            ),
      );
    });

  users
    .command('role')
    .description("change a user's role (an account keeps at least one owner)")
    .argument('<user-id>')
    // Checked by the use case, so the CLI refuses a role in the words the admin API does.
    .argument('<role>', USER_ROLES.join(' or '))
    .option('--json', JSON_HELP)
    .action(async (userId: string, role: string, opts: JsonOption) => {
      const user = await withAdmin(opts, (a) => a.users.setRole(userId, role));
      emit(opts, user, () =>
        wrap(
          `User ${user.id} ${user.email} is ${user.role === 'owner' ? 'an owner' : 'a member'} of account ${user.account_id}.`,
        ),
      );
    });

  oneShotCommand(users, {
    name: 'remove',
    description: 'remove a user',
    argument: '<user-id>',
    ask: (a, userId) => a.users.remove(userId),
    text: (user) => `Removed user ${user.id} ${user.email} from account ${user.account_id}.`,
  });
}

const byId = (item: { id: string }) => item.id;
