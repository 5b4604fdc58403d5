/** @module `toolgate migrate`: apply the numbered migrations not yet applied (every other command does too). */
import type { Command } from 'commander';
import { nowSeconds, systemClock } from '../domain/clock.js';
import { DEFAULT_PLANS } from '../domain/plans.js';
import { withStore } from './context.js';
import { emit, JSON_HELP, type JsonOption } from './output.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('bring the database named by TOOLGATE_DATABASE_URL up to date')
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption) => {
      const { applied } = await withStore((store) => store.migrate(DEFAULT_PLANS, nowSeconds(systemClock)));
      emit(opts, { applied }, () =>
        applied.length === 0 ? 'The database is up to date.' : `Applied migrations: ${applied.join(', ')}.`,
      );
    });
}
