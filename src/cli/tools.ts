/** @module `toolgate tools`: import a catalogue file (all or nothing, or a dry run), list, show, remove. */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ToolMetering } from '../domain/catalogue.js';
import { unitSingular } from '../domain/plans.js';
import type { ImportAnswer, ToolRecord } from '../service/catalogue.js';
import type { ToolPutOutcome } from '../store/store.js';
import { withAdmin } from './context.js';
import { oneShotCommand } from './one-shot.js';
import { CliError, emit, type FieldValue, fields, JSON_HELP, type JsonOption } from './output.js';
import { type PageOptions, pageOf, withNextPage, withPageOptions } from './paging.js';
import { table } from './table.js';

export function registerTools(program: Command): void {
  const tools = program
    .command('tools')
    .description('the tool catalogue: import a catalogue file; list, show or remove a tool');

  tools
    .command('import')
    .description(
      'create or replace every tool in a catalogue file ({"tools": [...]}); refused whole if any is wrong',
    )
    .argument('<file>', 'a JSON catalogue file')
    .option('--dry-run', 'check the file and say what would change, without writing anything')
    .option('--json', JSON_HELP)
    .action(async (file: string, opts: JsonOption & { dryRun?: boolean }) => {
      // Read and parsed before the store is opened: a wrong file needs no database.
      const catalogue = await readCatalogue(file);
      // A catalogue with problems is refused (exit 1), not a wrongly used command: the file was
      // read, and what is wrong with it is listed member by member.
      const answer = await withAdmin(opts, (a) => a.tools.import(catalogue, opts.dryRun === true));
      emit(opts, answer, () => importText(answer));
    });

  withPageOptions(tools.command('list').description('the tool catalogue, by name'), 'name')
    .option('--json', JSON_HELP)
    .action(async (opts: JsonOption & PageOptions) => {
      const list = pageOf(await withAdmin(opts, (a) => a.tools.list()), byName, opts);
      emit(opts, list, () =>
        list.length === 0
          ? 'No tools in the catalogue.'
          : withNextPage(toolsTable(list), list, byName, opts, 'toolgate tools list'),
      );
    });

  oneShotCommand(tools, {
    name: 'show',
    description: "a tool's whole definition",
    argument: '<name>',
    ask: (a, name) => a.tools.get(name),
    text: toolBlock,
  });

  oneShotCommand(tools, {
    name: 'remove',
    description: 'remove a tool from the catalogue (servers stop serving it)',
    argument: '<name>',
    ask: (a, name) => a.tools.remove(name),
    text: (tool) => {
      const cost = tool.metering ? `, ${tokensText(tool.metering)}` : '';
      return `Removed tool ${tool.name} (${category(tool.metering)}${cost}; ${upstreamText(tool)}).`;
    },
  });
}

/** The file's JSON; unreadable or not JSON is a usage error (exit 2) naming the file. */
async function readCatalogue(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === 'ENOENT'
        ? 'no such file'
        : e.code === 'EISDIR'
          ? 'it is a directory'
          : e.code === 'EACCES'
            ? 'permission denied'
            : e.message;
    throw new CliError('invalid_arguments', `Cannot read the catalogue file "${file}": ${why}.`);
  }
  try {
    // A byte-order mark is what some editors save; JSON.parse would refuse it.
    return JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new CliError(
      'invalid_json',
      `The catalogue file "${file}" is not valid JSON: ${(err as Error).message}`,
    );
  }
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function importText(a: ImportAnswer): string {
  const count = (o: ToolPutOutcome) => a.tools.filter((t) => t.outcome === o).length;
  const [created, updated, unchanged] = [count('created'), count('updated'), count('unchanged')];
  const lines = a.tools.map((t) => `${t.outcome.padEnd(9)}  ${t.name}`);
  if (a.dry_run) {
    const would = [created > 0 ? `create ${created}` : '', updated > 0 ? `update ${updated}` : ''].filter(
      Boolean,
    );
    const rest = unchanged > 0 ? ` (${unchanged} unchanged)` : '';
    const summary = would.length > 0 ? `would ${would.join(', ')}${rest}` : `would change nothing${rest}`;
    lines.push('', `Dry run: ${summary}; nothing was written.`);
  } else {
    const parts = [
      created > 0 ? `${created} created` : '',
      updated > 0 ? `${updated} updated` : '',
      unchanged > 0 ? `${unchanged} unchanged` : '',
    ].filter(Boolean);
    lines.push(
      '',
      `Imported ${plural(a.tools.length, 'tool')} (${parts.join(', ')}); catalogue revision ${a.revision}.`,
    );
  }
  return lines.join('\n');
}

const category = (m: ToolMetering | null): string => m?.category ?? 'free';

/** What a call costs: `2/call + 1/record` (`1/page` in its unit), or `0` for a free tool or one metered at nothing. */
function tokensText(m: ToolMetering | null): string {
  if (!m) return '0';
  const parts = [
    m.tokens_per_call > 0 ? `${m.tokens_per_call}/call` : '',
    m.tokens_per_record > 0 ? `${m.tokens_per_record}/${unitSingular(m.unit ?? 'records')}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(' + ') : '0';
}

/** Origin and path only: a query string may carry a credential, and tables are pasted around. */
function upstreamText(t: ToolRecord): string {
  try {
    const url = new URL(t.upstream.url);
    return `${url.origin}${url.pathname}`;
  } catch {
    return t.upstream.url;
  }
}

function toolsTable(list: ToolRecord[]): string {
  return table(
    ['name', 'category', 'tokens', 'upstream', { name: 'updated', optional: true }],
    list.map((t) => [t.name, category(t.metering), tokensText(t.metering), upstreamText(t), t.updated_at]),
  );
}

/** Every member of the definition, as `tools show` asked for it; the input schema last, as indented JSON. */
function toolBlock(t: ToolRecord): string {
  const m = t.metering;
  const headers = Object.entries(t.upstream.headers);
  const pairs: Array<readonly [string, FieldValue]> = [
    ['name', t.name],
    // A description's own lines continue under the value column; anything else in it is escaped.
    ['description', t.description === '' ? '-' : t.description.split(/\r?\n/)],
    ['category', category(m)],
    ...(m ? ([['unit', m.unit ?? 'records']] as const) : []),
    ['tokens', tokensText(m)],
    ...(m
      ? ([
          [`${m.unit ?? 'records'} pointer`, JSON.stringify(m.records_pointer)],
          [
            `expected ${m.unit ?? 'records'}`,
            m.expected_records_pointer === null ? '-' : JSON.stringify(m.expected_records_pointer),
          ],
        ] as const)
      : []),
    ['upstream', t.upstream.url],
    ['timeout', `${t.upstream.timeout_ms} ms`],
    ['max response', `${t.upstream.max_response_bytes} bytes`],
    ['headers', headers.length === 0 ? '-' : headers.map(([k, v]) => `${k}: ${v}`)],
    ['created', t.created_at],
    ['updated', t.updated_at],
  ];
  const block = fields(pairs);
  const schema = JSON.stringify(t.input_schema, null, 2).replace(/^/gm, '  ');
  return `${block}\n\ninput schema:\n${schema}`;
}

const byName = (tool: { name: string }) => tool.name;
