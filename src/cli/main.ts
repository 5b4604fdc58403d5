#!/usr/bin/env node
/**
 * @module The `toolgate` command for operators and scripts. Every command takes --json. Exit codes:
 * 0 done, 1 refused or failed (not found, quota, balance, conflict), 2 wrong usage or configuration.
 */
// First: before anything big is loaded (see ../tick-shape.ts).
import '../tick-shape.js';
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { registerAccount } from './account.js';
import { registerAccounts } from './accounts.js';
import { httpUrl } from './args.js';
import { registerAudit } from './audit.js';
import { registerBilling } from './billing.js';
import { registerConsole } from './console.js';
import { registerKeys } from './keys.js';
import { registerMigrate } from './migrate.js';
import { CliError, EXIT_OK, EXIT_USAGE, errorBody, reportError } from './output.js';
import { registerPlans } from './plans.js';
import { registerServe } from './serve.js';
import { shortenedIdRefusal } from './table.js';
import { registerTokens } from './tokens.js';
import { registerTools } from './tools.js';
import { registerTopups } from './topups.js';
import { registerUsage } from './usage.js';
import { registerUsers } from './users.js';
import { registerWebhooks } from './webhooks.js';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    return String(pkg.version);
  } catch {
    return 'unknown';
  }
}

/** The command tree; `json()` says whether errors are to be printed as JSON. */
export function buildProgram(json: () => boolean): Command {
  const program = new Command('toolgate')
    .description(
      'Operate toolgate: accounts, keys, users, tokens, usage, plans, tools and webhooks on TOOLGATE_DATABASE_URL.',
    )
    .version(version(), '-V, --version')
    .exitOverride()
    .configureOutput({
      // Usage errors read like every other error; in --json mode they are printed as JSON by run().
      outputError: (str, write) => {
        if (!json()) write(`toolgate: ${str.replace(/^error: /, '')}`);
      },
    })
    .showHelpAfterError(json() ? false : '(add --help for usage)')
    .showSuggestionAfterError();
  registerServe(program);
  registerMigrate(program);
  registerPlans(program);
  registerTopups(program);
  registerTools(program);
  registerAccounts(program);
  registerKeys(program);
  registerUsers(program);
  registerTokens(program);
  registerBilling(program);
  registerUsage(program);
  registerWebhooks(program);
  registerAudit(program);
  registerConsole(program);
  registerAccount(program);
  addServerOption(program);
  return program;
}

/** Commands that work on the database or a process of their own, never through an admin API. */
const LOCAL_ONLY = new Set(['serve', 'migrate', 'account']);

/**
 * Gives every command that has one the `--url <server>` option (TOOLGATE_URL): through that server's
 * admin API instead of the database. `webhooks add` has `--url` for its endpoint, so `--server` there.
 * With it `--allow-http`: plain http to a server that is not loopback is refused without it.
 */
function addServerOption(program: Command): void {
  for (const group of program.commands) {
    if (LOCAL_ONLY.has(group.name())) continue;
    for (const leaf of group.commands) {
      const taken = leaf.options.some((o) => o.long === '--url');
      leaf.addOption(
        new Option(
          `${taken ? '--server' : '--url'} <server>`,
          "work through this server's admin API (with TOOLGATE_ADMIN_TOKEN) instead of the database",
        )
          .env('TOOLGATE_URL')
          .argParser(httpUrl),
      );
      leaf.addOption(
        new Option(
          '--allow-http',
          'send the admin token over plain http to a server that is not loopback (TOOLGATE_ALLOW_HTTP=true)',
        ),
      );
    }
  }
}

/** Parses and runs one command line; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  // Until a command is chosen, --json anywhere asks for JSON errors; then the command's own option decides.
  let json = argv.slice(2).includes('--json');
  const program = buildProgram(() => json);
  program.hook('preAction', (_program, action) => {
    json = Boolean(action.opts().json);
  });
  try {
    const shortened = shortenedIdRefusal(argv.slice(2));
    if (shortened) throw new CliError('invalid_arguments', shortened);
    await program.parseAsync(argv);
    // A command that printed its answer may still have failed (a test event not delivered).
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT_OK;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) return EXIT_OK; // --help, --version
      if (json) {
        const message = err.message.replace(/^error: /, '');
        process.stdout.write(
          `${JSON.stringify(errorBody(new CliError('invalid_arguments', message)), null, 2)}\n`,
        );
      }
      return EXIT_USAGE;
    }
    return reportError(err, json);
  }
}

run(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`toolgate: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
