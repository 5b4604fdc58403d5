/** @module `toolgate console link`: a console sign-in link for a user, printed instead of mailed. */
import type { Command } from 'commander';
import { withAdmin } from './context.js';
import { emit, JSON_HELP, type JsonOption } from './output.js';

export function registerConsole(program: Command): void {
  const console = program.command('console').description("the customers' console at /console");

  console
    .command('link')
    .description(
      'print a sign-in link for a user (single use, valid 15 minutes), to hand over instead of mailing',
    )
    .argument('<email>')
    .option('--account <id>', 'the account the link leads into (the user must belong to it)')
    .option('--json', JSON_HELP)
    .action(async (email: string, opts: JsonOption & { account?: string }) => {
      const link = await withAdmin(opts, (a) => a.console.link(email, opts.account));
      emit(
        opts,
        link,
        () => `Sign-in link for ${email.trim().toLowerCase()} (single use, valid 15 minutes):\n${link.url}`,
      );
    });
}
