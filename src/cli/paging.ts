/**
 * @module `--limit` and `--after` for the lists the admin API answers whole (an account's keys and
 * users, webhook endpoints, catalogue tools): the page is cut here, the same way in both modes, and
 * the table says how to ask for the next one.
 */
import type { Command } from 'commander';
import { DEFAULT_PAGE, MAX_PAGE } from '../service/context.js';
import { wholeNumber } from './args.js';
import { moreMayFollow } from './table.js';

export interface PageOptions {
  limit?: number;
  after?: string;
}

/** Adds `--limit <n>` and `--after <cursor>` to a list command. */
export function withPageOptions(command: Command, cursor: string): Command {
  return command
    .option(
      '--limit <n>',
      `how many (1-${MAX_PAGE}, default ${DEFAULT_PAGE})`,
      wholeNumber('--limit', 1, MAX_PAGE),
    )
    .option(`--after <${cursor}>`, `start after this one (the last ${cursor} of the previous page)`);
}

/**
 * The page of `list` (in its order) after the item whose `key` is `after`, at most `limit` long; a
 * cursor no longer in the list (removed since) starts after where it would sort.
 */
export function pageOf<T>(list: readonly T[], key: (item: T) => string, opts: PageOptions): T[] {
  const limit = opts.limit ?? DEFAULT_PAGE;
  const { after } = opts;
  if (after === undefined) return list.slice(0, limit);
  const at = list.findIndex((item) => key(item) === after);
  const rest = at >= 0 ? list.slice(at + 1) : list.filter((item) => key(item) > after);
  return rest.slice(0, limit);
}

/** The table, and the command for the next page when this one is full. */
export function withNextPage<T>(
  table: string,
  page: readonly T[],
  key: (item: T) => string,
  opts: PageOptions,
  command: string,
): string {
  const limit = opts.limit ?? DEFAULT_PAGE;
  const last = page[page.length - 1];
  return page.length === limit && last !== undefined
    ? `${table}\n\n${moreMayFollow(`${command} --limit ${limit} --after ${key(last)}`)}`
    : table;
}
