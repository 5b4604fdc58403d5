/** @module The shape most subcommands share: one argument, one ask of the admin port, its answer printed. */
import type { Command } from 'commander';
import type { Admin } from './admin-port.js';
import { withAdmin } from './context.js';
import { emit, JSON_HELP, type JsonOption } from './output.js';

export interface OneShot<T> {
  name: string;
  description: string;
  /** `<account-id>`, `<name>`, ... */
  argument: string;
  ask: (admin: Admin, arg: string) => Promise<T>;
  /** The answer for people (`--json` prints the value as it is). */
  text: (value: T) => string;
  /** After printing: a failure the value shows, as the exit code (a test delivery not delivered). */
  exitCode?: (value: T) => number | undefined;
}

/** Adds `<parent> <name> <argument> [--json]`: asks once, through the server or the database, and prints. */
export function oneShotCommand<T>(parent: Command, spec: OneShot<T>): Command {
  return parent
    .command(spec.name)
    .description(spec.description)
    .argument(spec.argument)
    .option('--json', JSON_HELP)
    .action(async (arg: string, opts: JsonOption) => {
      const value = await withAdmin(opts, (a) => spec.ask(a, arg));
      emit(opts, value, () => spec.text(value));
      const code = spec.exitCode?.(value);
      if (code !== undefined) process.exitCode = code;
    });
}
