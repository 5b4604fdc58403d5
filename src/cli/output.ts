/**
 * @module What the CLI prints: JSON for scripts (`--json`, on stdout, errors included) or short lines
 * and tables for people (errors on stderr), and the exit code every failure maps to.
 */
import { STATUS_CODES } from 'node:http';
import { ToolgateError } from '../client/errors.js';
import { ERROR_STATUS, type Failure, type Result, StoreUnavailableError } from '../domain/errors.js';

export const EXIT_OK = 0;
/** The operation was refused or failed: not_found, fair_use_exceeded, insufficient_tokens, conflict... */
export const EXIT_FAILED = 1;
/** The command was used wrongly: bad arguments, bad configuration. */
export const EXIT_USAGE = 2;

/** Codes that mean "you asked wrongly", not "it was refused". */
const USAGE_CODES = new Set(['invalid_arguments', 'invalid_json', 'invalid_configuration', 'usage_error']);

export interface JsonOption {
  json?: boolean;
  /** `--url` / TOOLGATE_URL: work through this server's admin API instead of the database. */
  url?: string;
}

export const JSON_HELP = 'print JSON (for scripts); errors too, on stdout';

/** An expected failure on its way out of a command. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly exitCode: number = USAGE_CODES.has(code) ? EXIT_USAGE : EXIT_FAILED,
  ) {
    super(message);
  }

  static from(f: Failure): CliError {
    return new CliError(f.code, f.message, f.details ?? {});
  }
}

/** The value of a use case, or its failure thrown as a CliError. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw CliError.from(result.error);
  return result.value;
}

/**
 * What a terminal acts on instead of printing: C0 controls (ESC starts a sequence that can clear the
 * screen, retitle the window or rewrite the clipboard; CR returns over what was printed), DEL, C1
 * controls (U+009B is a CSI by itself), the line and paragraph separators, and the bidi marks,
 * embeddings, overrides and isolates that reorder the text after them.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return (
    NAMED_ESCAPES[c] ??
    (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
  );
}

/** A stored string as one printable line: every control character written as its escape (`\x1b`, `\u202e`). */
export function printable(value: string): string {
  return value.replace(UNPRINTABLE, escapeChar);
}

/**
 * Lines for people, as the terminal will show them: everything but the newlines between lines
 * escaped. The last guard of every human output: cells are escaped whole already (a newline in a
 * name cannot start a row), and this catches a stored string a sentence names.
 */
function printableText(text: string): string {
  return text.replace(UNPRINTABLE, (c) => (c === '\n' ? c : escapeChar(c)));
}

/** Prints `value` as JSON with --json (exact: escaping is JSON's), otherwise the human rendering, printable. */
export function emit(opts: JsonOption, value: unknown, human: () => string): void {
  process.stdout.write(
    opts.json ? `${JSON.stringify(value, null, 2)}\n` : `${printableText(human()).replace(/\n+$/, '')}\n`,
  );
}

/** Any thrown value as a CliError: configuration and store problems keep their meaning, the rest is internal. */
export function toCliError(err: unknown): CliError {
  if (err instanceof CliError) return err;
  // By name: importing config.ts here would load its schema library for every command.
  if (err instanceof Error && err.name === 'ConfigError')
    return new CliError('invalid_configuration', err.message);
  if (err instanceof StoreUnavailableError) {
    return new CliError('unavailable', `The database cannot be reached: ${err.message}`);
  }
  if (err instanceof ToolgateError) {
    const { status: _s, error: _e, code: _c, message: _m, ...details } = err.body ?? {};
    return new CliError(
      err.code,
      err.message,
      err.status ? { http_status: err.status, ...details } : details,
    );
  }
  const message = err instanceof Error ? err.message : String(err);
  return new CliError('internal_error', `Unexpected error: ${message}`);
}

/** The error body the admin API would answer with, minus the request id (there is no request). */
export function errorBody(e: CliError): Record<string, unknown> {
  const status = (ERROR_STATUS as Record<string, number>)[e.code];
  return {
    status: 'error',
    ...(status ? { error: STATUS_CODES[status] ?? 'Error' } : {}),
    code: e.code,
    message: e.message,
    ...e.details,
  };
}

/**
 * `  <path>: <reason>` for each problem a refusal lists (a catalogue file's), so people see every
 * one of them as scripts do in the JSON body; "" otherwise. An empty path is the file as a whole.
 */
function problemLines(problems: unknown): string {
  if (!Array.isArray(problems)) return '';
  return problems
    .filter(
      (p): p is { path: string; reason: string } =>
        typeof p?.path === 'string' && typeof p?.reason === 'string',
    )
    .map((p) => `  ${p.path === '' ? '(whole file)' : printable(p.path)}: ${printable(p.reason)}\n`)
    .join('');
}

/** Prints a failure where it belongs for the mode, and returns the exit code. */
export function reportError(err: unknown, json: boolean): number {
  const e = toCliError(err);
  if (json) process.stdout.write(`${JSON.stringify(errorBody(e), null, 2)}\n`);
  else process.stderr.write(printableText(`toolgate: ${e.message}\n${problemLines(e.details.problems)}`));
  return e.exitCode;
}

/** The width human tables fit in: the terminal's, else COLUMNS, else 100 (a pipe, a file, a CI log). */
export function outputWidth(): number {
  const columns = process.stdout.isTTY ? process.stdout.columns : Number(process.env.COLUMNS);
  return Number.isSafeInteger(columns) && columns >= 20 ? columns : 100;
}

/** A cell cut to `width` characters, its last one an ellipsis when anything was cut. */
const cut = (cell: string, width: number) => (cell.length <= width ? cell : `${cell.slice(0, width - 1)}…`);

/** Cells people copy whole (ids, times, numbers): their column is cut only when free text cannot make room. */
const WHOLE = /^(?:[a-z]{2,4}_[0-9a-z]{20,}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|[-+]?\d+|-)$/;
/** Columns this narrow (a status, a type, a count) are cut only when nothing else is left to cut. */
const SHORT = 16;

/**
 * Column widths that fit `room`, one character at a time from the widest column: first long
 * free-text columns (names, details, URLs, errors), then long columns of ids and times, each down
 * to SHORT characters; then any column but the first, down to its heading. Only a table whose
 * first column and other headings alone are wider than `room` stays wider. `--json` always has the
 * whole text.
 */
function fitWidths(natural: number[], headers: readonly string[], body: string[][], room: number): number[] {
  const widths = [...natural];
  // The first column names the row (an id, a plan, a time): it is never cut.
  const heading = natural.map((w, i) => (i === 0 ? w : Math.min(w, Math.max(3, headers[i]?.length ?? 0))));
  const short = natural.map((w, i) => Math.max(heading[i]!, Math.min(w, SHORT)));
  const whole = natural.map((_, i) => body.every((r) => WHOLE.test(r[i] ?? '')));
  const phases: Array<{ may: (i: number) => boolean; floor: number[] }> = [
    { may: (i) => !whole[i], floor: short },
    { may: (i) => whole[i]!, floor: short },
    { may: () => true, floor: heading },
  ];
  let total = widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1);
  for (const { may, floor } of phases) {
    while (total > room) {
      let widest = -1;
      for (let i = 0; i < widths.length; i++) {
        if (!may(i) || widths[i]! <= floor[i]!) continue;
        if (widest < 0 || widths[i]! > widths[widest]!) widest = i;
      }
      if (widest < 0) break;
      widths[widest]! -= 1;
      total -= 1;
    }
  }
  return widths;
}

/**
 * Columns padded to their widest cell, two spaces apart; headers in capitals; every cell printable;
 * the whole as wide as the terminal at most (see outputWidth), cut cells ending in an ellipsis.
 */
export function table(
  headers: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
  room: number = outputWidth(),
): string {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => r.map((c) => printable(String(c))))];
  const natural = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const widths = fitWidths(natural, headers, cells.slice(1), room);
  return cells
    .map((r) =>
      r
        .map((c, i) => cut(c, widths[i] ?? 0).padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A field's value: one line, or several (each printed under the value column). */
export type FieldValue = string | number | readonly string[];

/** `key  value` lines with the keys aligned; every value line printable. */
export function fields(pairs: ReadonlyArray<readonly [string, FieldValue]>, indent = ''): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  const under = `\n${indent}${' '.repeat(width + 2)}`;
  return pairs
    .map(([k, v]) => {
      const lines = typeof v === 'object' ? v : [String(v)];
      return `${indent}${k.padEnd(width)}  ${lines.map(printable).join(under)}`;
    })
    .join('\n');
}

/** A token balance for people: -1 is "unlimited". */
export function balanceText(balance: number): string {
  return balance === -1 ? 'unlimited' : `${balance} tokens`;
}

export const orDash = (v: string | null | undefined): string => (v === null || v === undefined ? '-' : v);
