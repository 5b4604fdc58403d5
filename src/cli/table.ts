/**
 * @module Human tables that fit the terminal. What gives way, in order: ids (to their kind, an
 * ellipsis and the tail that tells them apart: `acc_…tbgm0q`), columns a table marks optional (left
 * out whole, and named under the table), times (to the minute, then to the day), and only then free
 * text, cut with an ellipsis. `--json` always has every value whole.
 */
import { printable } from './output.js';

/** A column: its heading (printed in capitals) and whether it may be left out to fit. */
export interface Column {
  name: string;
  /** Left out when the table cannot fit otherwise (after ids are shortened); rightmost first. */
  optional?: boolean;
  /** The heading as it is written: a value people type (a plan id), not a word. */
  keepCase?: boolean;
  /** Times shortened to the minute at most, never to the day (when the next attempt is due). */
  toTheMinute?: boolean;
}

export type ColumnSpec = string | Column;

/** The width human tables fit in: the terminal's, else COLUMNS, else 100 (a pipe, a file, a CI log). */
export function outputWidth(): number {
  const columns = process.stdout.isTTY ? process.stdout.columns : Number(process.env.COLUMNS);
  return Number.isSafeInteger(columns) && columns >= 20 ? columns : 100;
}

/** toolgate's ids (src/domain/ids.ts) and Stripe's, each with its kind's prefix apart (group 1). */
const TOOLGATE_ID = /^([a-z]{3}_)[0-9a-hjkmnp-tv-z]{26}$/;
const STRIPE_ID = /^((?:price|prod|cus|sub|evt|in)_)[0-9A-Za-z]{14,}$/;
const TIME = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d):\d\dZ$/;
/** Numbers (and `-` for none): with ids and times, cells a column of is not free text. */
const WHOLE = /^(?:[-+]?\d+|-)$/;
/** The random end of an id: 6 characters (30 bits) tell a page of ids apart but for a freak. */
const MIN_TAIL = 6;
/** Free text is cut to this first; below it only when nothing else can give way. */
const SHORT = 16;
/** Free text this long reads well enough: optional columns and times give way before it is cut shorter. */
const READABLE = 32;

const idPrefix = (cell: string) => (TOOLGATE_ID.exec(cell) ?? STRIPE_ID.exec(cell))?.[1];

/**
 * The ids among `cells` shortened to their prefix, an ellipsis and their last characters: as many
 * (6 at least) as it takes for no two different ids to look the same. The random part is at the
 * end (the start is the time it was made, shared by ids made together), so the tail is what tells
 * them apart; other cells stay as they are.
 */
export function shortIds(cells: readonly string[]): string[] {
  const ids = [...new Set(cells.filter((c) => idPrefix(c) !== undefined))];
  const short = (id: string, n: number) => `${idPrefix(id)}…${id.slice(-n)}`;
  let n = MIN_TAIL;
  while (new Set(ids.map((id) => short(id, n))).size < ids.length) n++;
  return cells.map((c) => (idPrefix(c) === undefined ? c : short(c, n)));
}

/** An id as a table shortens it (or typed with three dots), alone or as an option's `=value`. */
const SHORTENED_ID = /^(?:--[a-z-]+=)?([a-z]{2,6}_(?:…|\.\.\.)[0-9A-Za-z]+)$/;

/**
 * The refusal of an argument that is an id as a table shortened it: pasted back, it names nothing,
 * and "No account" would send its reader looking for one that exists. Undefined when there is none.
 */
export function shortenedIdRefusal(args: readonly string[]): string | undefined {
  for (const arg of args) {
    const id = SHORTENED_ID.exec(arg)?.[1];
    if (id)
      return `"${id}" is an id shortened to fit a table: give it whole. The same command with --json prints every id whole, as does a wider terminal (COLUMNS=200).`;
  }
  return undefined;
}

/** Times to the minute (`2026-04-10 09:30Z`) or to the day (`2026-04-10`); other cells as they are. */
const toMinute = (cells: readonly string[]) => cells.map((c) => c.replace(TIME, '$1 $2Z'));
const toDay = (cells: readonly string[]) => cells.map((c) => c.replace(TIME, '$1'));

/** A column as it is laid out: its cells in each form it has (longest first) and the form in use. */
interface Laid {
  name: string;
  heading: string;
  forms: string[][];
  form: number;
  kind: 'id' | 'time' | 'other';
  optional: boolean;
  dropped: boolean;
  /** Free text (names, URLs, details): cut first. */
  text: boolean;
}

function layColumn(spec: ColumnSpec, cells: string[]): Laid {
  const {
    name,
    optional = false,
    keepCase = false,
    toTheMinute = false,
  } = typeof spec === 'string' ? { name: spec } : spec;
  const hasId = cells.some((c) => idPrefix(c) !== undefined);
  const allTimes = cells.some((c) => TIME.test(c)) && cells.every((c) => TIME.test(c) || c === '-');
  const times = toTheMinute ? [cells, toMinute(cells)] : [cells, toMinute(cells), toDay(cells)];
  const forms = hasId ? [cells, shortIds(cells)] : allTimes ? times : [cells];
  const whole = (c: string) => WHOLE.test(c) || idPrefix(c) !== undefined || TIME.test(c);
  return {
    name,
    heading: keepCase ? name : name.toUpperCase(),
    forms,
    form: 0,
    kind: hasId ? 'id' : allTimes ? 'time' : 'other',
    optional,
    dropped: false,
    text: !cells.every(whole),
  };
}

const cellsOf = (c: Laid) => c.forms[c.form]!;
const naturalWidth = (c: Laid) => Math.max(c.heading.length, ...cellsOf(c).map((s) => s.length));
/** How narrow a column may be before optional columns and times give way: free text to READABLE. */
const readableWidth = (c: Laid) =>
  c.text ? Math.min(naturalWidth(c), Math.max(c.heading.length, READABLE)) : naturalWidth(c);

function total(cols: Laid[], width: (c: Laid) => number): number {
  const shown = cols.filter((c) => !c.dropped);
  return shown.reduce((sum, c) => sum + width(c), 0) + 2 * (shown.length - 1);
}

/**
 * The discrete steps that make a table narrower, taken one at a time while it is too wide: ids
 * first (the widest column of them first), then, while free text cut to READABLE would still not
 * fit, optional columns (rightmost first), then times to the minute and to the day (leftmost
 * first; never the first column, which names the row).
 */
function shorten(cols: Laid[], room: number): void {
  while (total(cols, naturalWidth) > room) {
    const ids = cols.filter((c) => c.kind === 'id' && c.form === 0);
    if (ids.length === 0) break;
    const widest = ids.reduce((a, b) => (naturalWidth(b) >= naturalWidth(a) ? b : a));
    widest.form = 1;
  }
  const dropOptional = () => {
    const col = cols.findLast((c) => c.optional && !c.dropped);
    if (col) col.dropped = true;
    return col !== undefined;
  };
  const timesTo = (form: number) => () => {
    const col = cols.find(
      (c, i) => i > 0 && !c.dropped && c.kind === 'time' && c.form === form - 1 && c.forms.length > form,
    );
    if (col) col.form = form;
    return col !== undefined;
  };
  while (total(cols, readableWidth) > room && dropOptional());
  // A time to the day reads as well as a name cut short: times give way before any text is cut.
  for (const step of [timesTo(1), timesTo(2)]) while (total(cols, naturalWidth) > room && step());
}

/**
 * Column widths that fit `room`, one character at a time from the widest column: first free text
 * down to SHORT characters, then down to its heading, then any column but the first down to its
 * heading. Only a table whose first column and other headings alone are wider than
 * `room` stays wider.
 */
function fitWidths(cols: Laid[], room: number): number[] {
  const widths = cols.map(naturalWidth);
  // The first column names the row (an id, a plan, a time): it is never cut.
  const heading = cols.map((c, i) =>
    i === 0 ? widths[i]! : Math.min(widths[i]!, Math.max(3, c.heading.length)),
  );
  const short = widths.map((w, i) => Math.max(heading[i]!, Math.min(w, SHORT)));
  const phases: Array<{ may: (i: number) => boolean; floor: number[] }> = [
    { may: (i) => cols[i]!.text, floor: short },
    // Ids and times are at their shortest form already: a cut one is no use.
    { may: (i) => cols[i]!.text, floor: heading },
    { may: () => true, floor: heading },
  ];
  let sum = total(cols, naturalWidth);
  for (const { may, floor } of phases) {
    while (sum > room) {
      let widest = -1;
      for (let i = 0; i < widths.length; i++) {
        if (cols[i]!.dropped || !may(i) || widths[i]! <= floor[i]!) continue;
        if (widest < 0 || widths[i]! > widths[widest]!) widest = i;
      }
      if (widest < 0) break;
      widths[widest]! -= 1;
      sum -= 1;
    }
  }
  return widths;
}

/** A cell cut to `width` characters, its last one an ellipsis when anything was cut. */
const cut = (cell: string, width: number) => (cell.length <= width ? cell : `${cell.slice(0, width - 1)}…`);

/**
 * Columns padded to their widest cell, two spaces apart; headers in capitals; every cell printable;
 * the whole as wide as `room` at most (the terminal's, see outputWidth), shortened as the module
 * says. Columns left out are named on a line under the table.
 */
export function table(
  columns: readonly ColumnSpec[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
  room: number = outputWidth(),
): string {
  const body = rows.map((r) => r.map((c) => printable(String(c))));
  const cols = columns.map((spec, i) =>
    layColumn(
      spec,
      body.map((r) => r[i] ?? ''),
    ),
  );
  shorten(cols, room);
  const widths = fitWidths(cols, room);
  const shown = cols.map((_, i) => i).filter((i) => !cols[i]!.dropped);
  const line = (cell: (i: number) => string) =>
    shown
      .map((i) => cut(cell(i), widths[i]!).padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  const lines = [
    line((i) => cols[i]!.heading),
    ...body.map((_, r) => line((i) => cellsOf(cols[i]!)[r] ?? '')),
  ];
  const left = cols.filter((c) => c.dropped).map((c) => c.name);
  if (left.length > 0)
    lines.push(
      '',
      wrap(
        `Not shown in ${room} columns: ${left.join(', ')} (--json has ${left.length === 1 ? 'it' : 'them'}).`,
        room,
      ),
    );
  return lines.join('\n');
}

/**
 * A sentence broken between words into lines of `room` characters at most (a word longer stays
 * whole); given as a list, its items are the words (`12 calls,` is not broken).
 */
export function wrap(text: string | readonly string[], room: number = outputWidth()): string {
  const lines: string[] = [];
  let current = '';
  for (const word of typeof text === 'string' ? text.split(' ') : text) {
    if (current !== '' && current.length + 1 + word.length > room) {
      lines.push(current);
      current = word;
    } else current = current === '' ? word : `${current} ${word}`;
  }
  lines.push(current);
  return lines.join('\n');
}

/**
 * `More may follow: <command>` on one line when it fits `room`; else the command on lines of its own
 * continued with ` \`, as a shell reads them, so that it can still be pasted whole.
 */
export function moreMayFollow(command: string, room: number = outputWidth()): string {
  const oneLine = `More may follow: ${command}`;
  if (oneLine.length <= room) return oneLine;
  // An option stays on the line of its value.
  const units = command.split(' ').reduce<string[]>((acc, word) => {
    const last = acc[acc.length - 1];
    if (last !== undefined && /^--\S+$/.test(last) && !word.startsWith('--'))
      acc[acc.length - 1] = `${last} ${word}`;
    else acc.push(word);
    return acc;
  }, []);
  const [first = '', ...rest] = units;
  const lines: string[] = [];
  let current = `  ${first}`;
  for (const word of rest) {
    // Room is kept for the ` \` that continues the line.
    if (current.length + 1 + word.length + 2 > room) {
      lines.push(`${current} \\`);
      current = `    ${word}`;
    } else current = `${current} ${word}`;
  }
  lines.push(current);
  return ['More may follow:', ...lines].join('\n');
}
