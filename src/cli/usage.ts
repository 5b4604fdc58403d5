/**
 * @module `toolgate usage`: `record` meters a consumption through fair use, atomically, as a tool
 * would; `report` shows an account's usage history (every key at once) by day, key or tool, for
 * people, as JSON or as CSV.
 */
import { type Command, Option } from 'commander';
import { MAX_AMOUNT } from '../domain/fair-use.js';
import { unitSingular } from '../domain/plans.js';
import { type CountsView, type HistoryView, unitsOf } from '../service/billing.js';
import type { UsageAnswer } from '../service/usage.js';
import { wholeNumber } from './args.js';
import { withAdmin } from './context.js';
import { emit, JSON_HELP, type JsonOption, orDash } from './output.js';
import { fairUseLines } from './render.js';
import { type ColumnSpec, table, wrap } from './table.js';

interface RecordOptions extends JsonOption {
  category: string;
  records?: number;
  unit?: string;
  amount?: number;
  requests?: number;
  idempotencyKey?: string;
}

interface ReportOptions extends JsonOption {
  from?: string;
  to?: string;
  by?: string;
  csv?: boolean;
}

export function registerUsage(program: Command): void {
  const usage = program
    .command('usage')
    .description("meter usage against fair-use quotas; report an account's usage history");

  usage
    .command('record')
    .description('record a consumption: all of it or, if a window would pass its limit, none (exit 1)')
    .argument('<account-id>')
    .addOption(
      new Option(
        '--category <category>',
        "a category of the account's plan (enrich, search or its own)",
      ).makeOptionMandatory(),
    )
    .option('--records <n>', 'records returned (default 0)', wholeNumber('--records', 0, MAX_AMOUNT))
    .addOption(
      new Option('--unit <unit>', 'a unit of the category (such as pages), with --amount').conflicts(
        'records',
      ),
    )
    .option('--amount <n>', 'the amount of --unit', wholeNumber('--amount', 0, MAX_AMOUNT))
    .option('--requests <n>', 'requests made (default 1)', wholeNumber('--requests', 0, MAX_AMOUNT))
    .option('--idempotency-key <key>', 'the same key again is counted once and answers the same')
    .option('--json', JSON_HELP)
    .action(async (accountId: string, opts: RecordOptions) => {
      const { response, replayed } = await withAdmin(opts, (a) =>
        a.usage.record(accountId, {
          category: opts.category,
          ...(opts.records !== undefined ? { records: opts.records } : {}),
          ...(opts.unit !== undefined ? { unit: opts.unit } : {}),
          ...(opts.amount !== undefined ? { amount: opts.amount } : {}),
          ...(opts.requests !== undefined ? { requests: opts.requests } : {}),
          ...(opts.idempotencyKey !== undefined ? { idempotency_key: opts.idempotencyKey } : {}),
        }),
      );
      emit(opts, response, () => describe(response, replayed, opts.idempotencyKey));
    });

  usage
    .command('report')
    .description("an account's usage history, every key at once: one row per day, key or tool")
    .argument('<account-id>')
    // Dates and grouping are checked by the service, so the CLI refuses what the admin API refuses.
    .option('--from <day>', 'first day, YYYY-MM-DD (default: 29 days before --to)')
    .option('--to <day>', 'last day, YYYY-MM-DD (default: today, UTC)')
    .option('--by <grouping>', 'day (default), key or tool')
    .addOption(new Option('--json', JSON_HELP).conflicts('csv'))
    .addOption(new Option('--csv', 'print CSV: a header line, then one line per row (no totals)'))
    .action(async (accountId: string, opts: ReportOptions) => {
      const { history, names } = await withAdmin(opts, async (a) => {
        const history = await a.usage.history(accountId, {
          ...(opts.from !== undefined ? { from: opts.from } : {}),
          ...(opts.to !== undefined ? { to: opts.to } : {}),
          ...(opts.by !== undefined ? { by: opts.by } : {}),
        });
        // People read keys by their names: the account's keys (revoked ones too) name the rows.
        const keys = history.by === 'key' && !opts.json && !opts.csv ? await a.keys.list(accountId) : [];
        return { history, names: new Map(keys.map((k) => [k.id, k.name])) };
      });
      if (opts.csv) process.stdout.write(historyCsv(history));
      else emit(opts, history, () => historyText(history, names));
    });
}

/** The member each grouping's rows are named by, and its column's heading for people. */
const GROUP_MEMBER = { day: 'day', key: 'key_id', tool: 'tool' } as const;
const GROUP_HEADING = { day: 'date', key: 'key', tool: 'tool' } as const;

const COUNT_COLUMNS = ['calls', 'tokens', 'records', 'with_data', 'without_data', 'failed'] as const;

/** The columns of a history: the counts, with a column per unit besides records after records. */
function columnsOf(h: HistoryView): string[] {
  const units = unitsOf([h.totals]);
  return [...COUNT_COLUMNS.slice(0, 3), ...units, ...COUNT_COLUMNS.slice(3)];
}

/** A row's figure in a column: a count, or the amount of a unit (0 where it counted none). */
const cell = (c: CountsView, column: string): number =>
  (COUNT_COLUMNS as readonly string[]).includes(column)
    ? (c[column as (typeof COUNT_COLUMNS)[number]] as number)
    : (c.units?.[column] ?? 0);

/** A column's heading: with and without data may be left out before a name is cut (the totals line has them). */
const headingOf = (column: string): ColumnSpec =>
  column === 'with_data' || column === 'without_data'
    ? { name: column.replace('_', ' '), optional: true }
    : column.replace('_', ' ');

/** `names`: each key's name by its id, for the rows by key (a key without one shows `-`). */
function historyText(h: HistoryView, names: ReadonlyMap<string, string | null>): string {
  const head = wrap(`Usage of ${h.account_id} from ${h.from} to ${h.to}, by ${h.by}:`);
  const t = h.totals;
  const units = unitsOf([t]);
  const totals = wrap([
    'Total:',
    `${t.calls} calls,`,
    `${t.tokens} tokens,`,
    `${t.records} records,`,
    ...units.map((u) => `${t.units?.[u] ?? 0} ${u},`),
    `${t.with_data} with data,`,
    `${t.without_data} without data,`,
    `${t.failed} failed.`,
  ]);
  // By key or tool only what was used has a row; by day every day has one.
  if (h.rows.length === 0) return `${head}\n\nNo calls.\n\n${totals}`;
  const member = GROUP_MEMBER[h.by];
  const columns = columnsOf(h);
  const headings = columns.map(headingOf);
  const rows =
    h.by === 'key'
      ? table(
          ['key', 'name', ...headings],
          h.rows.map((r) => [
            r.key_id ?? '',
            orDash(names.get(r.key_id ?? '')),
            ...columns.map((c) => cell(r, c)),
          ]),
        )
      : table(
          [GROUP_HEADING[h.by], ...headings],
          h.rows.map((r) => [r[member] ?? '', ...columns.map((c) => cell(r, c))]),
        );
  return `${head}\n\n${rows}\n\n${totals}`;
}

/** A CSV field, quoted (RFC 4180) only where it holds a comma, a quote or a line break. */
const csvField = (v: string | number): string => {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

function historyCsv(h: HistoryView): string {
  const member = GROUP_MEMBER[h.by];
  const columns = columnsOf(h);
  const lines = [
    [member, ...columns],
    ...h.rows.map((r) => [r[member] ?? '', ...columns.map((c) => cell(r, c))]),
  ].map((cells) => cells.map(csvField).join(','));
  return `${lines.join('\n')}\n`;
}

function describe(a: UsageAnswer, replayed: boolean, key: string | undefined): string {
  // `7 records, 1 request`; a unit of the plan's own as it is named: `40 pages, 1 request`.
  const what = Object.entries(a.recorded)
    .map(([unit, n]) => `${n} ${n === 1 ? unitSingular(unit) : unit}`)
    .join(', ');
  const head = replayed
    ? `Already recorded under idempotency key "${key}" (${a.category}: ${what}); counted once. Windows as first recorded:`
    : `Recorded ${a.category} for ${a.account_id}: ${what}. Windows now:`;
  return [head, ...fairUseLines(a.fair_use)].join('\n');
}
